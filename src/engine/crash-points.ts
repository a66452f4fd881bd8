/**
 * Named crash points at every commit boundary, off unless a test arms them with
 * `CAIRN_CRASH_AT=<point>[:<n>]` (kill this process with SIGKILL on the n-th hit, default 1).
 * Optional `CAIRN_CRASH_MATCH=<substring>` limits hits to op keys containing it.
 */
export type CrashPoint =
  | "before-intent"
  | "after-intent"
  | "after-effect"
  | "before-outcome"
  | "after-outcome"
  | "before-suspend"
  | "after-suspend"
  | "before-consume"
  | "after-consume"
  | "after-timer-armed"
  | "before-complete"
  | "after-snapshot"
  /** `ctx.publish` / a `ctx.handle` reply is durable, nobody has read it yet. */
  | "after-reply"
  /** `ctx.continueAsNew`: the commit that ends the run and creates the next one is about to be made / was made. */
  | "before-continue"
  | "after-continue"
  // The scheduler's: a tick's run was started, the schedule's state not yet advanced.
  | "schedule-after-start"
  /** Outbox dispatcher: a message is claimed, about to be delivered. */
  | "before-deliver"
  /** Outbox dispatcher: a message was delivered, not yet marked delivered (it will be delivered again). */
  | "after-deliver"
  /** A loop iteration's resource was acquired again on resume (ops/acquire.ts), its outcome not yet journaled. */
  | "after-reacquire-effect"
  | SagaCrashPoint;

/** Crash points inside a saga's cleanup: compensations and resource releases (test/saga-crash.test.ts). */
export type SagaCrashPoint =
  | "after-compensation-intent"
  | "after-compensation-effect"
  | "after-compensation-outcome"
  | "after-release-intent"
  | "after-release-effect"
  | "after-release-outcome"
  | "before-saga-end";

/** Every saga crash point, for the saga crash tests (the run-wide crash test does not reach them). */
export const SAGA_CRASH_POINTS: readonly SagaCrashPoint[] = [
  "after-compensation-intent",
  "after-compensation-effect",
  "after-compensation-outcome",
  "after-release-intent",
  "after-release-effect",
  "after-release-outcome",
  "before-saga-end",
];

/** Every crash point a run execution passes, for tests that iterate over them (the scheduler's are not listed). */
export const CRASH_POINTS: readonly CrashPoint[] = [
  "before-intent",
  "after-intent",
  "after-effect",
  "before-outcome",
  "after-outcome",
  "before-suspend",
  "after-suspend",
  "before-consume",
  "after-consume",
  "after-timer-armed",
  "before-complete",
  "after-snapshot",
];

/** The outbox dispatcher's crash points (matched against the message's op key), kept apart from the run's. */
export const OUTBOX_CRASH_POINTS: readonly CrashPoint[] = ["before-deliver", "after-deliver"];

const spec = process.env.CAIRN_CRASH_AT;
const [armedPoint, countText] = spec ? spec.split(":") : [undefined, undefined];
const crashOnHit = countText ? Number(countText) : 1;
const match = process.env.CAIRN_CRASH_MATCH;
let hits = 0;

/** Kills the process here if a test armed this point. A no-op otherwise. */
export function crashPoint(point: CrashPoint, opKey?: string | null): void {
  if (armedPoint !== point) return;
  if (match && !(opKey ?? "").includes(match)) return;
  hits += 1;
  if (hits >= crashOnHit) process.kill(process.pid, "SIGKILL");
}
