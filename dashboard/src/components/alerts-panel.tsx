import type { ApiAlert } from "cairn/client";
import { api } from "../api";
import { dateTime } from "../format";
import { usePolling } from "../hooks";
import { runPath } from "../router";
import { Link } from "./link";
import { Loaded } from "./status";

/** Recent alerts (`GET /alerts`, admin scope): what fired, when, and whether its message was delivered. */
export function AlertsPanel() {
  const alerts = usePolling(() => api.listAlerts({ limit: 10 }), 20_000, []);
  const forbidden = (alerts.error as { status?: number } | undefined)?.status === 403;
  return (
    <div className="panel" data-panel="alerts">
      <h2>Alerts</h2>
      <p className="muted small">
        Fired by the alert rules (<span className="mono">GET /alerts/rules</span>), each once, as a <span className="mono">cairn.alert</span> outbox message.
      </p>
      {forbidden ? (
        <p className="muted">Alerts need a token with the admin scope.</p>
      ) : (
        <Loaded polled={alerts}>{(list) => <AlertList alerts={list} />}</Loaded>
      )}
    </div>
  );
}

function AlertList({ alerts }: { alerts: ApiAlert[] }) {
  if (alerts.length === 0) return <p className="muted">No alert has fired.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th>fired</th>
          <th>rule</th>
          <th>what</th>
          <th>delivery</th>
        </tr>
      </thead>
      <tbody>
        {alerts.map((alert) => (
          <tr key={alert.alertId} data-alert={alert.alertId}>
            <td title={alert.firedAt}>
              <Link href={runPath(alert.runId)}>{dateTime(alert.firedAt, { short: true })}</Link>
            </td>
            <td>
              <span className="mono">{alert.rule}</span>
              <div className="muted small">{alert.kind}</div>
            </td>
            <td>
              {alert.summary}
              {alert.description && <div className="muted small">{alert.description}</div>}
              {alert.runIds.length > 0 && (
                <div className="small">
                  {alert.runIds.slice(0, 3).map((runId) => (
                    <Link key={runId} href={runPath(runId)} className="mono">
                      {runId}{" "}
                    </Link>
                  ))}
                </div>
              )}
            </td>
            <td>
              <span className={`badge delivery-${alert.delivery}`}>{alert.delivery}</span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
