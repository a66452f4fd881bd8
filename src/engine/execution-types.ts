import type { EntryKind, NewEntry, WaitDescriptor } from "../core/journal.js";
import type { ExecutionHost } from "./execution-host.js";
import type { Saga } from "./saga.js";

/** A journal entry with its payload decoded. */
export interface DecodedEntry {
  seq: number;
  kind: EntryKind;
  data: any;
}

/** What an op delivers to workflow code: a value or an error. */
export type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** What the journal holds for one step key. */
export interface StepHistory {
  entries: DecodedEntry[];
  /** A `run.retried` forgot this step's terminal failure: it gets a fresh retry budget. */
  retried: boolean;
}

/** The part of an execution that op runners (the step runner) work through. */
export interface OpExecution {
  readonly runId: string;
  /** The lease epoch the execution writes at. */
  readonly epoch: number;
  /** Aborted when the execution is abandoned. */
  readonly signal: AbortSignal;
  /** The abort's reason once the execution was aborted (as `signal` would say, without making one). */
  readonly abortState: { reason: unknown } | undefined;
  /** Calls `listener` when the execution is aborted from now on (not if it was already); returns what unregisters it. */
  onAbort(listener: (reason: unknown) => void): () => void;
  readonly hostRef: ExecutionHost;
  readonly isDraining: boolean;
  readonly isEnded: boolean;
  /** The run's compensations and resources. */
  readonly saga: Saga;
  /** Appends entries durably; returns the last seq. Throws LeaseLostError when fenced out. */
  write(entries: NewEntry[]): Promise<number>;
  /** Journals an outcome and delivers it in journal order (see Execution.commitOutcome). */
  commitOutcome(key: string, entries: NewEntry[], outcome: Outcome, onDurable?: () => void): void;
  block(descriptor: WaitDescriptor): void;
  stepHistory(key: string): StepHistory;
  /** Takes the oldest unconsumed inbox event of this type (matching `match`, if given) no other wait took. */
  takeEvent(type: string, match?: Record<string, unknown>): Promise<{ id: number; eventId: string; payload: string } | undefined>;
}
