import { useState } from "react";
import { consoleApi } from "../api";
import { JsonView } from "../components/json-view";
import { Loaded } from "../components/status";
import { dateTime } from "../format";
import { usePolling } from "../hooks";

const PAGE = 100;
type Filters = { actor: string; action: string; target: string };
const NONE: Filters = { actor: "", action: "", target: "" };

/** The audit log, newest first: who did what to which run, token, schedule or version; filtered by exact actor, action or target. */
export function AuditPage() {
  const [draft, setDraft] = useState<Filters>(NONE);
  const [filters, setFilters] = useState<Filters>(NONE);
  const [befores, setBefores] = useState<number[]>([]);
  const beforeId = befores[befores.length - 1];
  const page = usePolling(
    () =>
      consoleApi.listAudit({
        limit: PAGE,
        ...(beforeId === undefined ? {} : { beforeId }),
        ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value.trim() !== "")),
      }),
    10_000,
    [filters, beforeId],
  );
  return (
    <section>
      <header className="page-header">
        <h1>Audit log</h1>
        <form
          className="filter-inputs"
          onSubmit={(event) => {
            event.preventDefault();
            setFilters({ actor: draft.actor.trim(), action: draft.action.trim(), target: draft.target.trim() });
            setBefores([]);
          }}
        >
          {(["actor", "action", "target"] as const).map((field) => (
            <input
              key={field}
              type="search"
              aria-label={`${field} filter`}
              placeholder={field === "actor" ? "actor (token:ops)" : field === "action" ? "action (run.cancel)" : "target"}
              value={draft[field]}
              onChange={(event) => setDraft({ ...draft, [field]: event.target.value })}
            />
          ))}
          <button type="submit">Filter</button>
        </form>
      </header>
      <Loaded polled={page}>
        {({ entries, nextBefore }) => (
          <>
            {entries.length === 0 ? (
              <p className="muted empty">No entries{filters.actor || filters.action || filters.target ? " match these filters (they match exactly)" : ""}.</p>
            ) : (
              <div className="table-scroll">
                <table className="console-table" data-table="audit">
                  <thead>
                    <tr>
                      <th>when</th>
                      <th>actor</th>
                      <th>action</th>
                      <th>target</th>
                      <th>detail</th>
                    </tr>
                  </thead>
                  <tbody>
                    {entries.map((entry) => (
                      <tr key={entry.id} data-audit-action={entry.action}>
                        <td>{dateTime(entry.at)}</td>
                        <td className="mono">{entry.actor}</td>
                        <td className="mono">{entry.action}</td>
                        <td className="mono cut">{entry.target ?? "–"}</td>
                        <td>{entry.detail ? <JsonView value={entry.detail} max={80} /> : ""}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <div className="pager">
              {befores.length > 0 && (
                <button type="button" onClick={() => setBefores(befores.slice(0, -1))}>
                  Newer
                </button>
              )}
              {nextBefore !== undefined && (
                <button type="button" onClick={() => setBefores([...befores, nextBefore])}>
                  Older
                </button>
              )}
            </div>
          </>
        )}
      </Loaded>
      <p className="muted small-print">
        Every privileged action of the API and the CLI is recorded after it succeeded. Reading the log needs a token with the admin scope. Same as{" "}
        <code>cairn audit</code>.
      </p>
    </section>
  );
}
