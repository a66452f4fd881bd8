import type { NonDeterminismError } from "../../core/errors.js";
import type { OpKind } from "../../core/journal.js";
import type { RunRecord } from "../../core/run.js";
import type { OpExecution } from "../execution-types.js";
import type { ReplayCore } from "../replay/replay-core.js";
import type { Scope } from "../replay/op-keys.js";
import type { WorkflowContext } from "../workflow.js";

/** How an execution took its run, read from the journal's latest `run.claimed` as it loads. */
export interface ResumedAs {
  /** The previous execution's lease expired (its worker died or stalled): this one recovered the run. */
  recovered: boolean;
  /** How long the run was suspended before this execution claimed it (0 if it was not). */
  sleptMs: number;
}

/**
 * What the ops of `engine/ops/` issue and schedule through: the execution of one run
 * (engine/execution.ts). An op checks its arguments, issues its key, then either gets its journaled
 * outcome or runs live through {@link OpScheduler.awaitOp}.
 */
export interface OpScheduler extends OpExecution {
  /** The run being executed. */
  readonly run: RunRecord;
  /** The journal, the outcomes due and the ops issued. */
  readonly replay: ReplayCore;
  /** How this execution took the run: after its previous worker died, or after it slept (engine/ops/resume-approval.ts). */
  readonly resumedAs: ResumedAs;
  /** True once the run's end is decided: no new ops. */
  readonly isSettled: boolean;
  /** Issues an op: its key. Throws on a bad name or a divergence (failing the run). */
  issue(scope: Scope, name: unknown, kind: OpKind): string;
  /** The op's promise; `start` runs it live unless its outcome is journaled (counted as in flight). */
  awaitOp<T>(key: string, start: () => Promise<void>): Promise<T>;
  /** The op's promise; `run` runs it unless its outcome is journaled (not counted as in flight). */
  registerOp<T>(key: string, remember: (launch: () => void) => void, run: () => void): Promise<T>;
  /** Runs work that keeps the run from suspending or ending until it settles. */
  inFlight<T>(work: () => Promise<T>): Promise<T>;
  /** The workflow context of a scope (the workflow's, or a loop iteration's). */
  makeContext(scope: Scope): WorkflowContext;
  /** Fails the run: its code no longer matches its journal. */
  failNonDeterminism(error: NonDeterminismError): void;
  /** An engine error while running an op: abandons the execution. */
  onInternalError(key: string, error: unknown): void;
}
