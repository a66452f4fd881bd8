/**
 * Where an execution is in its life. One field instead of separate flags, so every state is named:
 *
 * - `running`: replaying the journal and running ops.
 * - `draining`: the worker is stopping: no new attempts, no deliveries; once nothing is in flight
 *   the lease is given back (`run.released`).
 * - `ending`: the run's end is decided (it completes, fails, suspends, continues as new, or unwinds):
 *   no new ops; ops in flight may still finish.
 * - `cleaning-up`: the run compensates and releases its resources before its terminal entry.
 * - `ended`: nothing more is written.
 *
 * A drain that arrives while the run is ending or cleaning up is kept (`ending-draining`,
 * `cleaning-up-draining`): in-flight step attempts then stop retrying, as they would when running.
 */
export type Phase = "running" | "draining" | "ending" | "ending-draining" | "cleaning-up" | "cleaning-up-draining" | "ended";

/** True once the run's end is decided (or the execution ended): no new ops may be issued. */
export function isSettled(phase: Phase): boolean {
  return phase !== "running" && phase !== "draining";
}

/** True when a drain was asked for (and the execution has not ended). */
export function isDraining(phase: Phase): boolean {
  return phase === "draining" || phase === "ending-draining" || phase === "cleaning-up-draining";
}

/** True while the run compensates or releases resources, or once the execution ended. */
export function isCleaningUp(phase: Phase): boolean {
  return phase === "cleaning-up" || phase === "cleaning-up-draining" || phase === "ended";
}

/** The phase after a drain request. */
export function drained(phase: Phase): Phase {
  switch (phase) {
    case "running":
      return "draining";
    case "ending":
      return "ending-draining";
    case "cleaning-up":
      return "cleaning-up-draining";
    default:
      return phase;
  }
}

/** The phase once the run's end is decided. */
export function settled(phase: Phase): Phase {
  switch (phase) {
    case "running":
      return "ending";
    case "draining":
      return "ending-draining";
    default:
      return phase;
  }
}

/** The phase once the run's clean-up (compensations, releases) begins. */
export function cleaningUp(phase: Phase): Phase {
  if (phase === "ended") return phase;
  return isDraining(phase) ? "cleaning-up-draining" : "cleaning-up";
}
