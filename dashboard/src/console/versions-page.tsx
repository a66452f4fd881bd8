import { RUN_STATUSES, type ApiVersion } from "cairn/client";
import { useState } from "react";
import { consoleApi } from "../api";
import { Link } from "../components/link";
import { Loaded } from "../components/status";
import { usePolling } from "../hooks";
import { BASE } from "../router";
import { ActionOutcome, useAction } from "./action";

const refOf = (v: Pick<ApiVersion, "workflow" | "version">) => `${v.workflow}@${v.version}`;

/**
 * Workflow versions and their runs by status; retire one (no worker claims its runs, which stay
 * where they are) or reinstate it. Retiring a version with live runs asks first.
 */
export function VersionsPage() {
  const versions = usePolling(() => consoleApi.listVersions(), 5000, []);
  const action = useAction(versions.refresh);
  const [confirming, setConfirming] = useState<string>();
  const setRetired = (v: ApiVersion, retire: boolean) => {
    setConfirming(undefined);
    void action.run(refOf(v), async () => {
      const ref = { workflow: v.workflow, version: v.version };
      const result = retire ? await consoleApi.retireVersion(ref) : await consoleApi.reinstateVersion(ref);
      if (!result.changed) return `${refOf(v)} was already ${retire ? "retired" : "in service"}.`;
      return retire
        ? `${refOf(v)} retired: workers stop claiming its runs within a heartbeat; its runs stay where they are.`
        : `${refOf(v)} reinstated: workers that run it claim its runs again.`;
    });
  };
  return (
    <section>
      <header className="page-header">
        <h1>Versions</h1>
        <span className="muted">{versions.data ? `${versions.data.length} ${versions.data.length === 1 ? "version" : "versions"}` : ""}</span>
      </header>
      <ActionOutcome state={action} />
      <Loaded polled={versions}>
        {(list) => {
          const statuses = RUN_STATUSES.filter((status) => list.some((v) => (v.counts[status] ?? 0) > 0));
          if (list.length === 0) return <p className="muted empty">No runs yet: versions appear here once runs of them exist.</p>;
          return (
            <div className="table-scroll">
              <table className="console-table" data-table="versions">
                <thead>
                  <tr>
                    <th>workflow</th>
                    <th>version</th>
                    <th className="num">live</th>
                    {statuses.map((status) => (
                      <th key={status} className="num">
                        {status}
                      </th>
                    ))}
                    <th className="num">total</th>
                    <th>state</th>
                    <th>
                      <span className="visually-hidden">actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((v) => {
                    const ref = refOf(v);
                    return (
                      <tr key={ref} data-version={ref} data-retired={v.drained ? "true" : "false"}>
                        <td>
                          <Link href={`${BASE}/runs?workflow=${encodeURIComponent(v.workflow)}`} title={`Runs of ${v.workflow}`}>
                            {v.workflow}
                          </Link>
                        </td>
                        <td className="mono">{v.version}</td>
                        <td className="num">{v.live}</td>
                        {statuses.map((status) => (
                          <td key={status} className="num">
                            {v.counts[status] ?? 0}
                          </td>
                        ))}
                        <td className="num">{v.total}</td>
                        <td>
                          {v.drained ? <span className="badge version-retired">retired</span> : "in service"}
                          {!v.registered && <div className="muted small-note">no code on this server</div>}
                        </td>
                        <td>
                          {confirming === ref ? (
                            <span className="confirm" data-confirm={ref}>
                              Retire {ref}? Its {v.live} live {v.live === 1 ? "run stops" : "runs stop"} being claimed.{" "}
                              <button type="button" className="danger" onClick={() => setRetired(v, true)}>
                                Yes, retire
                              </button>{" "}
                              <button type="button" onClick={() => setConfirming(undefined)}>
                                Keep
                              </button>
                            </span>
                          ) : (
                            <button
                              type="button"
                              disabled={action.busy !== undefined}
                              aria-label={`${v.drained ? "Reinstate" : "Retire"} ${ref}`}
                              onClick={() => (v.drained ? setRetired(v, false) : v.live > 0 ? setConfirming(ref) : setRetired(v, true))}
                            >
                              {action.busy === ref ? "…" : v.drained ? "Reinstate" : "Retire"}
                            </button>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          );
        }}
      </Loaded>
      <p className="muted small-print">
        A retired version&apos;s runs are claimed by no worker until it is reinstated or they are cancelled (formerly “drain” / “undrain”). Retiring and
        reinstating need a token with the admin scope and are written to the <Link href={`${BASE}/audit`}>audit log</Link>. Same as{" "}
        <code>cairn retire|reinstate &lt;workflow&gt;@&lt;version&gt;</code>.
      </p>
    </section>
  );
}
