import type { CredentialBroker } from "./credentials.js";
import type { CommitResult, RunWrite, Store } from "../core/store.js";
import type { EngineLogger } from "./engine.js";

/**
 * The reads an execution makes outside its own commits: resuming from the journal, buffered events,
 * tags, a child's row and chain, journal search, and step slots. Writes go through {@link ExecutionHost.commit}.
 */
export type ExecutionStore = Pick<
  Store,
  | "readJournal"
  | "readJournalForResume"
  | "pendingEvents"
  | "getRunTags"
  | "getRun"
  | "searchJournal"
  | "acquireStepSlots"
  | "releaseStepSlots"
  | "readAgentMessages"
>;

/** What an execution needs from the worker that hosts it. */
export interface ExecutionHost {
  readonly store: ExecutionStore;
  readonly workerId: string;
  readonly maxPayloadBytes: number;
  readonly logger: EngineLogger;
  clock(): number;
  /** Group-committed write, fenced by the run's lease epoch. */
  commit(write: RunWrite): Promise<CommitResult>;
  /** Renew this run's lease now (a step called `heartbeat()`). */
  heartbeat(runId: string): void;
  /** Ephemeral progress of a step attempt, for observers (a step called `progress()`). */
  progress(runId: string, opKey: string, attempt: number, data: unknown): void;
  /** Runs a step attempt's function inside the observers' `aroundStep` (a tracing span), or just runs it. */
  aroundStep<T>(runId: string, opKey: string, attempt: number, run: () => T): T;
  /** New runnable work may exist (a child was started): poll soon. */
  kick(): void;
  /** A suspended run wants to wake at this time: poll then. */
  scheduleWake(at: number): void;
  /** The engine's credentials (`ctx.credential`); undefined when it registers none. */
  readonly credentials?: CredentialBroker | undefined;
}
