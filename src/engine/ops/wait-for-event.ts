import { toMs } from "../../core/duration.js";
import { TimeoutError, ValidationError } from "../../core/errors.js";
import { newEntry, type EntryData } from "../../core/journal.js";
import { decode, decodeKeepingSecrets } from "../../core/serialize.js";
import { crashPoint } from "../crash-points.js";
import { checkMatch } from "../event-triggers.js";
import type { Scope } from "../replay/op-keys.js";
import type { WaitOptions } from "../workflow.js";
import type { OpScheduler } from "./op-scheduler.js";

/** `ctx.waitForEvent`: takes the oldest matching inbox event, or times out, or blocks until one arrives. */
export function waitForEvent<T>(exec: OpScheduler, scope: Scope, type: string, options: WaitOptions = {}): Promise<T> {
  if (typeof type !== "string" || type.length === 0) throw new ValidationError("ctx.waitForEvent needs a non-empty event type.");
  const timeoutMs = options.timeout === undefined ? undefined : toMs(options.timeout);
  const match = checkMatch(options.match, `ctx.waitForEvent("${type}")`);
  const key = exec.issue(scope, options.name ?? type, "event");
  const host = exec.hostRef;
  return exec.awaitOp<T>(key, async () => {
    const waiting = exec.replay.journal.first(key)?.data as EntryData["event.waiting"] | undefined;
    let timeoutAt = waiting ? waiting.timeoutAt : null;
    if (!waiting) {
      timeoutAt = timeoutMs === undefined ? null : host.clock() + timeoutMs;
      await exec.write([newEntry("event.waiting", key, { type, timeoutAt, ...(match ? { match } : {}) })]);
    }
    // The journaled match wins on resume, so a wait keeps the filter it was issued with.
    const event = await exec.takeEvent(type, waiting ? waiting.match : match);
    if (event) {
      crashPoint("before-consume", key);
      // Keeps a secret payload's mark in the journal, so views of the entry redact it.
      const payload = decodeKeepingSecrets(event.payload);
      exec.commitOutcome(
        key,
        [newEntry("event.received", key, { type, eventId: event.eventId, payload, inboxId: event.id })],
        { ok: true, value: decode(event.payload) },
        () => crashPoint("after-consume", key),
      );
    } else if (timeoutAt !== null && timeoutAt <= host.clock()) {
      exec.commitOutcome(key, [newEntry("event.timedout", key, {})], { ok: false, error: new TimeoutError(key, `event "${type}"`) });
    } else {
      exec.block({ kind: "event", opKey: key, type, timeoutAt });
    }
  });
}
