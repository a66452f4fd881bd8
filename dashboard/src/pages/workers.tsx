import { api } from "../api";
import { ErrorBox } from "../components/status";
import { ago, duration } from "../format";
import { usePolling } from "../hooks";

/** Live workers: who they are, what they run, how many runs they hold, their last heartbeat. */
export function WorkersPage() {
  const workers = usePolling(() => api.listWorkers(), 3000, []);
  const now = Date.now();
  return (
    <section>
      <header className="page-header">
        <h1>Workers</h1>
        <span className="muted">{workers.data ? `${workers.data.length} live` : ""}</span>
      </header>
      <ErrorBox error={workers.error} />
      {workers.data?.length === 0 && <p className="muted empty">No live worker: runs wait in the store until one starts (`cairn worker`).</p>}
      {workers.data && workers.data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>worker</th>
              <th>host · pid</th>
              <th>workflows</th>
              <th className="num">runs held</th>
              <th>up</th>
              <th>heartbeat</th>
            </tr>
          </thead>
          <tbody>
            {workers.data.map((worker) => (
              <tr key={worker.workerId}>
                <td className="mono">{worker.workerId}</td>
                <td>
                  {worker.host} · {worker.pid}
                </td>
                <td>{worker.workflows.join(", ")}</td>
                <td className="num">{worker.runsHeld}</td>
                <td>{duration(now - Date.parse(worker.startedAt))}</td>
                <td>{ago(worker.heartbeatAt, now)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
