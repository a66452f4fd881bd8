/**
 * The lifecycle states of a run and the groups they fall in: the one definition of "terminal" that
 * the engine, the stores, the server, the CLI and the dashboard share. It imports nothing, so the
 * dashboard bundles it through `cairn/client` without pulling in any engine code.
 */

/**
 * Lifecycle states of a run. `compensated` and `compensation_failed` end a saga whose
 * compensations ran; `dead` is the dead-letter state of a run whose recovery kept failing.
 */
export type RunStatus = "pending" | "running" | "suspended" | "completed" | "failed" | "cancelled" | "compensated" | "compensation_failed" | "dead";

/** Every run status, in lifecycle order. */
export const RUN_STATUSES: readonly RunStatus[] = [
  "pending",
  "running",
  "suspended",
  "completed",
  "failed",
  "cancelled",
  "compensated",
  "compensation_failed",
  "dead",
];

/** A status a run never leaves on its own. */
export type TerminalStatus = Exclude<RunStatus, "pending" | "running" | "suspended">;

/** The statuses of a run that is not finished: a worker holds it, may claim it, or it waits. `engine.cancel` applies to these. */
export const LIVE_STATUSES: readonly RunStatus[] = ["pending", "running", "suspended"];

/**
 * The statuses a run never leaves on its own: every status but {@link LIVE_STATUSES}. `dead` is one
 * of them: a dead-lettered run is finished (its human requests are closed, retention may prune it,
 * streams end) until an operator retries it, as a failed run is.
 */
export const TERMINAL_STATUSES: readonly RunStatus[] = ["completed", "failed", "cancelled", "compensated", "compensation_failed", "dead"];

/** The terminal statuses of a run that ended in failure: `engine.retry` and `cairn retry` apply to these, and no other. */
export const FAILED_STATUSES: readonly RunStatus[] = ["failed", "compensation_failed", "dead"];

/** True for every status in {@link TERMINAL_STATUSES}. */
export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** True for every status in {@link FAILED_STATUSES}: a run an operator may retry. */
export function isFailed(status: RunStatus): boolean {
  return FAILED_STATUSES.includes(status);
}
