import type { ApiAlert } from "cairn/client";
import { dateTime } from "../format";
import { runPath } from "../router";
import { Link } from "./link";
import { Loaded } from "./status";

/**
 * Recent alerts, from the overview's one request (`GET /overview` answers the newest ten): what fired,
 * when, and whether its message was delivered. `null`: the token has a namespace, and alerts span them.
 */
export function AlertsPanel({ polled }: { polled: { data: { alerts?: ApiAlert[] | null } | undefined; error: Error | undefined } }) {
  return (
    <div className="panel" data-panel="alerts">
      <h2>Alerts</h2>
      <p className="muted small">
        Fired by the alert rules (<span className="mono">GET /alerts/rules</span>), each once, as a <span className="mono">cairn.alert</span> outbox message.
      </p>
      <Loaded polled={polled}>
        {(d) =>
          d.alerts === null ? (
            <p className="muted">Alerts span every namespace: a namespaced token does not see them.</p>
          ) : (
            <AlertList alerts={d.alerts ?? []} />
          )
        }
      </Loaded>
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
