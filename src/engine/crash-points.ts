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
  /** Outbox dispatcher: a message is claimed, about to be delivered. */
  | "before-deliver"
  /** Outbox dispatcher: a message was delivered, not yet marked delivered (it will be delivered again). */
  | "after-deliver";

/** Every crash point, for tests that iterate over them. */
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
