import type { ApiSchedule } from "cairn/client";
import { consoleApi } from "../api";
import { Link } from "../components/link";
import { JsonView } from "../components/json-view";
import { Loaded } from "../components/status";
import { dateTime } from "../format";
import { usePolling } from "../hooks";
import { BASE, runPath } from "../router";
import { ActionOutcome, useAction } from "./action";

/** Schedules: cron, zone, status, next and last ticks, the last run; pause and resume (admin, audited). */
export function SchedulesPage() {
  const schedules = usePolling(() => consoleApi.listSchedules(), 5000, []);
  const action = useAction(schedules.refresh);
  const toggle = (schedule: ApiSchedule) => {
    const pause = schedule.status === "active";
    void action.run(schedule.name, async () => {
      const result = pause ? await consoleApi.pauseSchedule(schedule.name) : await consoleApi.resumeSchedule(schedule.name);
      if (!result.changed) return `${schedule.name} was already ${result.schedule.status}.`;
      return pause ? `${schedule.name} paused.` : `${schedule.name} resumed; next tick ${dateTime(result.schedule.nextTickAt)}.`;
    });
  };
  return (
    <section>
      <header className="page-header">
        <h1>Schedules</h1>
        <span className="muted">{schedules.data ? `${schedules.data.length} ${schedules.data.length === 1 ? "schedule" : "schedules"}` : ""}</span>
      </header>
      <ActionOutcome state={action} />
      <Loaded polled={schedules}>
        {(list) =>
          list.length === 0 ? (
            <p className="muted empty">No schedules. Define them with defineSchedule() and pass them to createEngine({"{ schedules }"}).</p>
          ) : (
            <div className="table-scroll">
              <table className="console-table" data-table="schedules">
                <thead>
                  <tr>
                    <th>name</th>
                    <th>workflow</th>
                    <th>cron</th>
                    <th>status</th>
                    <th>next</th>
                    <th>last run</th>
                    <th className="num">fired · skipped · missed</th>
                    <th>input</th>
                    <th>
                      <span className="visually-hidden">actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {list.map((s) => (
                    <tr key={s.name} data-schedule={s.name} data-status={s.status}>
                      <td className="mono">{s.name}</td>
                      <td>{s.workflow}</td>
                      <td className="mono">
                        {s.cron} <span className="muted">({s.timezone})</span>
                      </td>
                      <td>
                        <span className={`badge schedule-${s.status}`}>{s.status}</span>
                      </td>
                      <td>{s.nextTickAt ? dateTime(s.nextTickAt) : "–"}</td>
                      <td>
                        {s.lastRunId ? (
                          <>
                            <Link href={runPath(s.lastRunId)} className="mono">
                              {s.lastRunId}
                            </Link>{" "}
                            <span className="muted">({s.lastRunStatus ?? "gone"})</span>
                          </>
                        ) : (
                          "–"
                        )}
                      </td>
                      <td className="num">
                        {s.firedCount} · {s.skippedCount} · {s.missedCount}
                        {s.bufferedTickAt ? " +1 buffered" : ""}
                      </td>
                      <td>{s.input === undefined ? "–" : <JsonView value={s.input} max={40} />}</td>
                      <td>
                        <button
                          type="button"
                          disabled={action.busy !== undefined}
                          onClick={() => toggle(s)}
                          aria-label={`${s.status === "active" ? "Pause" : "Resume"} ${s.name}`}
                        >
                          {action.busy === s.name ? "…" : s.status === "active" ? "Pause" : "Resume"}
                        </button>
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
        A paused schedule does not fire; ticks meanwhile are not fired later. Pausing and resuming need a token with the admin scope and are written to the{" "}
        <Link href={`${BASE}/audit`}>audit log</Link>. Same as <code>cairn schedules pause|resume &lt;name&gt;</code>.
      </p>
    </section>
  );
}
