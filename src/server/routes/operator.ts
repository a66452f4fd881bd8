import type { Hono } from "hono";
import { scheduleActionBody, scheduleNameParam, versionActionBody } from "../../core/console-schemas.js";
import type { AuditStore } from "../../core/store.js";
import type { Engine } from "../../engine/engine.js";
import { audit } from "../auth/audit.js";
import { json, parse, readJson } from "../http.js";
import { requireEveryNamespace } from "../metrics/metrics-route.js";
import type { ResolvedServerOptions } from "../options.js";

/**
 * Registers the operator's writes that only the CLI had: `POST /schedules/:name/pause|resume`
 * (`cairn schedules pause|resume`) and `POST /versions/retire|reinstate` (`cairn retire|reinstate`).
 * They act on every namespace's runs, so under token auth they need the admin scope (see
 * `scopeFor`); each change is audited under the CLI's action names (`schedule.pause`,
 * `schedule.resume`, `version.drain`, `version.undrain`). A request that changes nothing answers
 * `changed: false` and is not audited.
 */
/** `store`: the audit log, where each change is recorded. */
export function registerOperatorRoutes(app: Hono, engine: Engine, options: ResolvedServerOptions, store: Pick<AuditStore, "appendAudit">): void {
  for (const paused of [true, false]) {
    app.post(`/schedules/:name/${paused ? "pause" : "resume"}`, async (c) => {
      requireEveryNamespace(c, "Schedules (they start runs in any namespace)");
      const { name } = parse(scheduleNameParam, c.req.param(), "path");
      parse(scheduleActionBody, await readJson(c, options.bodyLimitBytes), "body");
      const before = await engine.getSchedule(name);
      const changed = before.status !== (paused ? "paused" : "active");
      if (!changed) return json(c, { schedule: before, changed });
      const schedule = paused ? await engine.pauseSchedule(name) : await engine.resumeSchedule(name);
      await audit(c, store, paused ? "schedule.pause" : "schedule.resume", name);
      return json(c, { schedule, changed });
    });
  }

  for (const retired of [true, false]) {
    app.post(`/versions/${retired ? "retire" : "reinstate"}`, async (c) => {
      requireEveryNamespace(c, "Workflow versions (their runs are in every namespace)");
      const { workflow, version } = parse(versionActionBody, await readJson(c, options.bodyLimitBytes), "body");
      const known = (await engine.listVersions()).some((v) => v.workflow === workflow && v.version === version);
      const changed = retired ? await engine.retireVersion(workflow, version) : await engine.reinstateVersion(workflow, version);
      // The CLI's action names (the store keeps the older word), so one audit filter finds both.
      if (changed) await audit(c, store, retired ? "version.drain" : "version.undrain", `${workflow}@${version}`, { via: "api", retired });
      return json(c, { workflow, version, retired, changed, known });
    });
  }
}
