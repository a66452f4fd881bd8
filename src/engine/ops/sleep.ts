import { toMs, type Duration } from "../../core/duration.js";
import { ValidationError } from "../../core/errors.js";
import { newEntry, type EntryData } from "../../core/journal.js";
import { crashPoint } from "../crash-points.js";
import type { Scope } from "../replay/op-keys.js";
import type { OpScheduler } from "./op-scheduler.js";

/** `ctx.sleep` / `ctx.sleepUntil`: a durable timer (its wake time is journaled, then the run may suspend). */
export function sleep(exec: OpScheduler, scope: Scope, name: string, duration: Duration | undefined, until: Date | number | undefined): Promise<void> {
  const ms = duration === undefined ? undefined : toMs(duration);
  const untilMs = until === undefined ? undefined : until instanceof Date ? until.getTime() : until;
  if (until !== undefined && !Number.isFinite(untilMs)) throw new ValidationError(`ctx.sleepUntil("${name}") needs a valid Date or epoch ms.`);
  const key = exec.issue(scope, name, "sleep");
  const host = exec.hostRef;
  return exec.awaitOp<void>(key, async () => {
    const started = exec.replay.journal.first(key)?.data as EntryData["sleep.started"] | undefined;
    let wakeAt = started?.wakeAt;
    if (wakeAt === undefined) {
      wakeAt = untilMs ?? host.clock() + (ms ?? 0);
      await exec.write([newEntry("sleep.started", key, { wakeAt })]);
      crashPoint("after-timer-armed", key);
    }
    if (wakeAt <= host.clock()) {
      exec.commitOutcome(key, [newEntry("sleep.completed", key, {})], { ok: true, value: undefined });
    } else {
      exec.block({ kind: "timer", opKey: key, wakeAt });
    }
  });
}
