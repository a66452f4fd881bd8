import type { EntryData, NewEntry } from "../core/journal.js";

/**
 * What happened in an engine, for metrics and tracing. Events are emitted after the entries they
 * describe are durable, by the process where they happened (a worker's steps, an engine's answers):
 * a metrics endpoint sees the work of its own process's workers.
 */
export type EngineEvent =
  | {
      /** A worker claimed (or was created holding) a run and starts executing it. */
      type: "execution-started";
      runId: string;
      workflow: string;
      workerId: string;
    }
  | {
      /** A worker stopped executing a run: it completed, failed, suspended, was released or abandoned. */
      type: "execution-ended";
      runId: string;
      workflow: string;
      workerId: string;
      end: "completed" | "failed" | "suspended" | "released" | "abandoned";
      durationMs: number;
    }
  | {
      /** A step attempt ended: `completed`, `failed` (final), or `retry` (failed, will run again). */
      type: "step";
      runId: string;
      workflow: string;
      opKey: string;
      outcome: "completed" | "failed" | "retry";
      attempt: number;
      /** From the attempt's durable intent to its durable outcome, when this process saw both; else null. */
      durationMs: number | null;
      /** The journaled result of a completed step. */
      result?: unknown;
      /** The agent tool the step ran (its intent's `tool`), when it is a tool call this process saw start. */
      tool?: string;
    }
  | {
      /** `engine.close()` began: observers holding the engine's store (a server's readers) stop using it. */
      type: "engine-closing";
    }
  | {
      /** A worker found it no longer held a run's lease and abandoned the execution. */
      type: "lease-lost";
      runId: string;
      workflow: string;
      workerId: string;
    }
  | {
      /**
       * A worker of this engine committed journal entries of a run: they are durable and readable now.
       * Lets same-process readers (the server's streams) wake at once instead of at their next poll.
       */
      type: "committed";
      runId: string;
      workflow: string;
      /** How many entries the commit appended. */
      entries: number;
      /** UTF-8 bytes of those entries' encoded payloads (as `RunCosts.journal.bytes` counts them). */
      bytes: number;
    }
  | {
      /**
       * Ephemeral progress of a running step attempt (`StepInfo.progress`), e.g. a model's partial
       * text: `{ kind: "text", text }` from the agent's model calls. Not journaled, not durable.
       */
      type: "step-progress";
      runId: string;
      workflow: string;
      opKey: string;
      attempt: number;
      data: unknown;
    }
  | {
      /** A human request was answered through this engine; `waitMs` since it was asked. */
      type: "human-answered";
      runId: string;
      /** The run's workflow ("" when the run is gone). */
      workflow: string;
      requestId: string;
      waitMs: number;
    };

/** The step attempt a {@link EngineObserver.aroundStep} wraps. */
export interface StepAttempt {
  runId: string;
  workflow: string;
  opKey: string;
  attempt: number;
}

/**
 * A listener of {@link EngineEvent}s. It must not throw (errors are logged and dropped) and should be quick.
 * It may also carry `aroundStep`: called by the worker with each step attempt's function, after the
 * attempt's intent is durable, to run it inside a context (a tracing span); it must call `run` once
 * and return what it returns. Observers without it cost nothing per step.
 */
export type EngineObserver = ((event: EngineEvent) => void) & {
  aroundStep?: <T>(step: StepAttempt, run: () => T) => T;
};

/**
 * Turns a worker's committed journal entries into step events, remembering when each attempt's
 * intent became durable. Memory is per held run and is dropped with {@link StepTracker.forget}.
 */
export class StepTracker {
  private readonly started = new Map<string, Map<string, { at: number; tool: string | undefined }>>();

  /** Events for entries of `runId` that became durable at `at`. */
  onCommitted(runId: string, workflow: string, entries: readonly NewEntry[], at: number): EngineEvent[] {
    const events: EngineEvent[] = [];
    for (const entry of entries) {
      if (entry.opKey === null) continue;
      switch (entry.kind) {
        case "step.started": {
          let run = this.started.get(runId);
          if (!run) this.started.set(runId, (run = new Map()));
          const intent = (entry.data as { intent?: { tool?: unknown } } | null)?.intent;
          run.set(entry.opKey, { at, tool: typeof intent?.tool === "string" ? intent.tool : undefined });
          break;
        }
        case "step.completed": {
          const data = entry.data as EntryData["step.completed"];
          events.push({ ...this.end(runId, workflow, entry.opKey, at), outcome: "completed", attempt: data.attempt, result: data.result });
          break;
        }
        case "step.failed": {
          const data = entry.data as EntryData["step.failed"];
          events.push({ ...this.end(runId, workflow, entry.opKey, at), outcome: data.final ? "failed" : "retry", attempt: data.attempt });
          break;
        }
      }
    }
    return events;
  }

  /** Drops what is remembered about a run that is no longer held. */
  forget(runId: string): void {
    this.started.delete(runId);
  }

  private end(runId: string, workflow: string, opKey: string, at: number) {
    const run = this.started.get(runId);
    const started = run?.get(opKey);
    run?.delete(opKey);
    return {
      type: "step" as const,
      runId,
      workflow,
      opKey,
      durationMs: started === undefined ? null : Math.max(0, at - started.at),
      ...(started?.tool === undefined ? {} : { tool: started.tool }),
    };
  }
}
