import type { ApiToken } from "cairn/client";
import { useState } from "react";
import { consoleApi } from "../api";
import { CopyButton } from "../components/copy-button";
import { Link } from "../components/link";
import { Loaded } from "../components/status";
import { dateTime } from "../format";
import { usePolling } from "../hooks";
import { BASE } from "../router";
import { ActionOutcome, useAction } from "./action";

const SCOPES = ["read", "write", "admin"] as const;

function stateOf(token: ApiToken, now: number): "revoked" | "expired" | "live" {
  if (token.revokedAt !== null) return "revoked";
  if (token.expiresAt !== null && Date.parse(token.expiresAt) <= now) return "expired";
  return "live";
}

/** API tokens (admin): list them, create one (its text shown once), revoke one after a confirmation. */
export function TokensPage() {
  const tokens = usePolling(() => consoleApi.listTokens(), 10_000, []);
  const action = useAction(tokens.refresh);
  const [confirming, setConfirming] = useState<string>();
  const now = Date.now();
  const revoke = (token: ApiToken) => {
    setConfirming(undefined);
    void action.run(token.id, async () => {
      await consoleApi.revokeToken(token.id);
      return `${token.name} revoked: it, its tickets and its dashboard sessions stop working now.`;
    });
  };
  return (
    <section>
      <header className="page-header">
        <h1>API tokens</h1>
        <span className="muted">{tokens.data ? `${tokens.data.filter((t) => stateOf(t, now) === "live").length} live` : ""}</span>
      </header>
      <ActionOutcome state={action} />
      <Loaded polled={tokens}>
        {(list) =>
          list.length === 0 ? (
            <p className="muted empty">No tokens: this server may run without auth (then anyone who reaches it may act).</p>
          ) : (
            <div className="table-scroll">
              <table className="console-table" data-table="tokens">
                <thead>
                  <tr>
                    <th>name</th>
                    <th>id</th>
                    <th>scopes</th>
                    <th>namespace</th>
                    <th>created</th>
                    <th>expires</th>
                    <th>state</th>
                    <th>
                      <span className="visually-hidden">actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((t) => {
                    const state = stateOf(t, now);
                    return (
                      <tr key={t.id} data-token={t.name} data-state={state}>
                        <td>{t.name}</td>
                        <td className="mono">{t.id}</td>
                        <td>{t.scopes.join(", ")}</td>
                        <td className="mono">{t.namespace ?? "every"}</td>
                        <td>{dateTime(t.createdAt)}</td>
                        <td>{t.expiresAt ? dateTime(t.expiresAt) : "never"}</td>
                        <td>{state === "revoked" ? `revoked ${dateTime(t.revokedAt)}` : state}</td>
                        <td>
                          {state !== "revoked" &&
                            (confirming === t.id ? (
                              <span className="confirm" data-confirm={t.name}>
                                Revoke {t.name}? Whoever uses it is turned away at once.{" "}
                                <button type="button" className="danger" onClick={() => revoke(t)}>
                                  Yes, revoke
                                </button>{" "}
                                <button type="button" onClick={() => setConfirming(undefined)}>
                                  Keep
                                </button>
                              </span>
                            ) : (
                              <button type="button" disabled={action.busy !== undefined} aria-label={`Revoke ${t.name}`} onClick={() => setConfirming(t.id)}>
                                Revoke
                              </button>
                            ))}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
      <CreateToken onCreated={tokens.refresh} />
      <p className="muted small-print">
        Managing tokens needs the admin scope; creating and revoking are written to the <Link href={`${BASE}/audit`}>audit log</Link>. Same as{" "}
        <code>cairn token create|list|revoke</code>.
      </p>
    </section>
  );
}

/** The form that creates a token, and the token's text, shown once. */
function CreateToken({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Set<string>>(new Set(["read"]));
  const [namespace, setNamespace] = useState("");
  const [expiresIn, setExpiresIn] = useState("");
  const [created, setCreated] = useState<{ name: string; token: string }>();
  const action = useAction(onCreated);
  const submit = () =>
    void action.run("create", async () => {
      setCreated(undefined);
      const result = await consoleApi.createToken({
        name: name.trim(),
        scopes: SCOPES.filter((scope) => scopes.has(scope)),
        ...(namespace.trim() ? { namespace: namespace.trim() } : {}),
        ...(expiresIn.trim() ? { expiresIn: expiresIn.trim() } : {}),
      });
      setCreated({ name: result.record.name, token: result.token });
      setName("");
      return `Token ${result.record.name} created.`;
    });
  return (
    <section className="panel create-token" aria-labelledby="create-token">
      <h2 id="create-token">Create a token</h2>
      <form
        className="token-create-form"
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <label>
          Name <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={128} placeholder="ci-deploys" />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map((scope) => (
            <label key={scope}>
              <input
                type="checkbox"
                checked={scopes.has(scope)}
                onChange={(e) => {
                  const next = new Set(scopes);
                  if (e.target.checked) next.add(scope);
                  else next.delete(scope);
                  setScopes(next);
                }}
              />{" "}
              {scope}
            </label>
          ))}
        </fieldset>
        <label>
          Namespace <input value={namespace} onChange={(e) => setNamespace(e.target.value)} placeholder="every (leave empty)" />
        </label>
        <label>
          Expires in <input className="short" value={expiresIn} onChange={(e) => setExpiresIn(e.target.value)} placeholder="30d" />
        </label>
        <button type="submit" className="primary" disabled={action.busy !== undefined || !name.trim() || scopes.size === 0}>
          Create
        </button>
      </form>
      <ActionOutcome state={action} />
      {created && (
        <div className="new-token" data-new-token>
          <p>
            The text of <b>{created.name}</b>, shown this once: keep it where it is needed now.
          </p>
          <code className="command">{created.token}</code> <CopyButton text={created.token} label="Copy token" />
        </div>
      )}
    </section>
  );
}
