import { note } from "./context.js";

/**
 * Resolves on the first SIGINT or SIGTERM, so the caller can shut down gracefully.
 * A second signal exits at once (code 130) without waiting for the graceful stop.
 */
export function untilShutdown(what: string): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        note(`${signal} again: exiting now. Unfinished steps are reconciled by the next worker.`);
        process.exit(130);
      }
      stopping = true;
      note(`${signal}: ${what} (press Ctrl-C again to exit at once)`);
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
