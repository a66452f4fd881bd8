import { consoleApi } from "../api";
import { Loaded } from "../components/status";
import { usePolling } from "../hooks";
import type { ApiQueue } from "cairn/client";

/** Flow-control queues: their limits, and runs running, waiting for a slot and suspended, per concurrency key. */
export function QueuesPage() {
  const queues = usePolling(() => consoleApi.listQueues(), 3000, []);
  return (
    <section>
      <header className="page-header">
        <h1>Queues and flow control</h1>
        <span className="muted">{queues.data ? `${queues.data.length} ${queues.data.length === 1 ? "queue" : "queues"}` : ""}</span>
      </header>
      <Loaded polled={queues}>
        {(list) =>
          list.length === 0 ? (
            <p className="muted empty">No queues: no workflow declares flow control (queue, concurrency, rate limit) and no run is waiting in one.</p>
          ) : (
            <div className="table-scroll">
              <table className="console-table" data-table="queues">
                <thead>
                  <tr>
                    <th>queue</th>
                    <th>limits</th>
                    <th className="num">running</th>
                    <th className="num">waiting</th>
                    <th className="num">suspended</th>
                    <th>by key</th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((q) => (
                    <tr key={q.name} data-queue={q.name}>
                      <td className="mono">{q.name}</td>
                      <td>{limitsText(q)}</td>
                      <td className="num">{q.running}</td>
                      <td className={q.waiting > 0 ? "num attention" : "num"}>{q.waiting}</td>
                      <td className="num">{q.suspended}</td>
                      <td>
                        {q.keys.length === 0 ? (
                          "–"
                        ) : (
                          <details>
                            <summary>{q.keys.length === 1 ? "1 key" : `${q.keys.length} keys`}</summary>
                            <ul className="plain">
                              {q.keys.slice(0, 200).map((k, i) => (
                                <li key={i}>
                                  <span className="mono">{k.concurrencyKey ?? "(no key)"}</span>: {k.running} running · {k.waiting} waiting · {k.suspended}{" "}
                                  suspended
                                </li>
                              ))}
                              {q.keys.length > 200 && <li className="muted">and {q.keys.length - 200} more (see cairn queues)</li>}
                            </ul>
                          </details>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
      <p className="muted small-print">
        Limits come from the workflows the server&apos;s engine declares; “not declared here” means runs use the queue but this server has no code for it. Same
        as <code>cairn queues</code>.
      </p>
    </section>
  );
}

function limitsText(q: ApiQueue): string {
  if (!q.limits) return "not declared here";
  const parts: string[] = [];
  if (q.limits.concurrency !== null) parts.push(`${q.limits.concurrency} at once`);
  if (q.limits.perKeyConcurrency !== null) parts.push(`${q.limits.perKeyConcurrency} per key`);
  if (q.limits.rateLimit) parts.push(`${q.limits.rateLimit.limit} per ${windowText(q.limits.rateLimit.perMs)}`);
  return parts.length ? parts.join(" · ") : "no limit";
}

/** A rate limit's window in its largest whole unit: 60000 → "1 min", 1500 → "1500 ms". */
function windowText(ms: number): string {
  for (const [unit, size] of [
    ["d", 86_400_000],
    ["h", 3_600_000],
    ["min", 60_000],
    ["s", 1000],
  ] as const)
    if (ms % size === 0) return `${ms / size} ${unit}`;
  return `${ms} ms`;
}
