import type { ApiOutboxMessage } from "cairn/client";
import { useState } from "react";
import { consoleApi } from "../api";
import { JsonView } from "../components/json-view";
import { Link } from "../components/link";
import { Loaded } from "../components/status";
import { dateTime } from "../format";
import { usePolling } from "../hooks";
import { BASE, runPath } from "../router";
import { ActionOutcome, useAction } from "./action";

const FILTERS = [
  { value: "dead", label: "dead" },
  { value: "pending", label: "pending" },
  { value: "delivered", label: "delivered" },
  { value: "all", label: "all" },
] as const;
const PAGE = 100;

/** Outbox messages written by `ctx.emit`: dead ones first, with their last error; retry a dead one (admin, audited). */
export function OutboxPage() {
  const [status, setStatus] = useState<(typeof FILTERS)[number]["value"]>("dead");
  const [afterIds, setAfterIds] = useState<number[]>([]);
  const afterId = afterIds[afterIds.length - 1];
  const messages = usePolling(() => consoleApi.listOutbox({ status, limit: PAGE, ...(afterId === undefined ? {} : { afterId }) }), 5000, [status, afterId]);
  const action = useAction(messages.refresh);
  const retry = (message: ApiOutboxMessage) =>
    void action.run(message.messageId, async () => {
      const result = await consoleApi.retryOutboxMessage(message.messageId);
      return result.applied ? `${message.messageId} is queued again (attempts start over).` : `${message.messageId} was not dead (${result.message.status}).`;
    });
  return (
    <section>
      <header className="page-header">
        <h1>Outbox</h1>
        <div className="chips" role="group" aria-label="message status">
          {FILTERS.map((f) => (
            <button
              key={f.value}
              type="button"
              className={status === f.value ? "chip on console-chip" : "chip console-chip"}
              aria-pressed={status === f.value}
              onClick={() => {
                setStatus(f.value);
                setAfterIds([]);
              }}
            >
              {f.label}
            </button>
          ))}
        </div>
      </header>
      <ActionOutcome state={action} />
      <Loaded polled={messages}>
        {(list) => (
          <>
            {list.length === 0 ? (
              <p className="muted empty">
                {status === "dead" ? "No dead messages: every message was delivered or is still being tried." : `No ${status} messages.`}
              </p>
            ) : (
              <div className="table-scroll">
                <table className="console-table" data-table="outbox">
                  <thead>
                    <tr>
                      <th>message</th>
                      <th>topic</th>
                      <th>status</th>
                      <th className="num">attempts</th>
                      <th>last error</th>
                      <th>when</th>
                      <th>payload</th>
                      <th>
                        <span className="visually-hidden">actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.map((m) => (
                      <tr key={m.id} data-message={m.messageId} data-status={m.status}>
                        <td>
                          <Link href={runPath(m.runId)} className="mono">
                            {m.runId}
                          </Link>
                          <div className="muted mono small-note">{m.opKey}</div>
                        </td>
                        <td className="mono">{m.topic}</td>
                        <td>
                          <span className={`badge outbox-${m.status}`}>{m.status}</span>
                        </td>
                        <td className="num">{m.attempts}</td>
                        <td className="err cut">{m.lastError ?? ""}</td>
                        <td>
                          {m.status === "delivered"
                            ? `delivered ${dateTime(m.deliveredAt)}`
                            : m.status === "pending"
                              ? `next ${dateTime(m.nextAttemptAt)}`
                              : `since ${dateTime(m.createdAt)}`}
                        </td>
                        <td>
                          <JsonView value={m.payload} max={60} />
                        </td>
                        <td>
                          {m.status === "dead" && (
                            <button type="button" disabled={action.busy !== undefined} onClick={() => retry(m)} aria-label={`Retry ${m.messageId}`}>
                              {action.busy === m.messageId ? "…" : "Retry"}
                            </button>
                          )}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            <div className="pager">
              {afterIds.length > 0 && (
                <button type="button" onClick={() => setAfterIds(afterIds.slice(0, -1))}>
                  Previous
                </button>
              )}
              {list.length === PAGE && (
                <button type="button" onClick={() => setAfterIds([...afterIds, list[list.length - 1]!.id])}>
                  Next {PAGE}
                </button>
              )}
            </div>
          </>
        )}
      </Loaded>
      <p className="muted small-print">
        A message dies after its topic&apos;s last attempt; a retry queues it again with its attempts starting over. Reading the outbox and retrying need a
        token with the admin scope; retries are written to the <Link href={`${BASE}/audit`}>audit log</Link>. Same as <code>cairn outbox</code>.
      </p>
    </section>
  );
}
