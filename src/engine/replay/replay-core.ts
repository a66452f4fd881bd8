import { NonDeterminismError, ValidationError } from "../../core/errors.js";
import { opKindOf, type JournalEntry, type OpKind } from "../../core/journal.js";
import type { DecodedEntry, Outcome } from "../execution-types.js";
import { DeliveryQueue, type Delivery, type Waiter } from "./deliveries.js";
import { JournalIndex, type IndexObserver } from "./journal-index.js";
import { nextOpKey, type Scope } from "./op-keys.js";
import { outcomeOf } from "./outcome.js";

const noop = () => {};

/**
 * The replay rules of one run, shared by a worker's execution and a dry replay (`cairn replay`):
 * the journal by op key, the outcomes due in journal order, the op keys the code issues and the
 * checks that find a divergence between code and journal. It runs nothing and writes nothing.
 */
export class ReplayCore {
  readonly journal = new JournalIndex();
  readonly deliveries = new DeliveryQueue();
  /** Op keys the code has issued (an ended loop iteration's are forgotten). */
  readonly issued = new Set<string>();
  /** Promises of issued ops not settled yet, by op key. */
  readonly waiters = new Map<string, Waiter>();

  constructor(readonly runId: string) {}

  /** Indexes the journal a resume reads and queues its outcomes; returns how many were queued. */
  load(entries: readonly JournalEntry[], observer?: IndexObserver): number {
    const outcomes = this.journal.load(entries, observer);
    for (const { key, entry } of outcomes) this.deliveries.push({ seq: entry.seq, opKey: key, outcome: this.outcomeOf(key, entry) });
    return outcomes.length;
  }

  /** The value or error an outcome entry of this run delivers to workflow code. */
  outcomeOf(key: string, entry: DecodedEntry): Outcome {
    return outcomeOf(this.runId, key, entry, this.journal.first(key));
  }

  /**
   * Issues the op `name` of `kind` in `scope`: its key, recorded as issued. Throws ValidationError for
   * a bad name, and the NonDeterminismError (after passing it to `onDivergence`) when the journal holds
   * another op kind at that key.
   */
  issue(scope: Scope, name: unknown, kind: OpKind, onDivergence: (error: NonDeterminismError) => void): string {
    const key = nextOpKey(scope, name, kind);
    const first = this.journal.first(key);
    if (first) {
      const journaled = opKindOf(first.kind);
      if (journaled !== kind) {
        const error = new NonDeterminismError(key, `a ${journaled} (${first.kind} at seq ${first.seq})`, `issues a ${kind} with that key`);
        onDivergence(error);
        throw error;
      }
    }
    this.issued.add(key);
    return key;
  }

  /** The op's promise, settled by {@link deliverNext}; a loser nobody listens to any more cannot crash the process. */
  wait<T>(key: string): Promise<T> {
    const promise = new Promise<T>((resolve, reject) => {
      this.waiters.set(key, { resolve: resolve as (value: unknown) => void, reject });
    });
    promise.catch(noop);
    return promise;
  }

  /** Hands the next outcome to its op if the code has issued it; undefined when it cannot. */
  deliverNext(): Delivery | undefined {
    return this.deliveries.deliverNext(this.issued, this.waiters);
  }

  /**
   * The divergence when the code stops short of the next journaled outcome: it `instead` (by default,
   * what it issued that the journal does not hold). Names the outcome entry itself, not a later entry
   * of the same op.
   */
  unreached(next: Delivery, instead = this.issuedInstead()): NonDeterminismError {
    const entries = this.journal.entries(next.opKey);
    const entry = entries.find((e) => e.seq === next.seq) ?? entries.at(-1);
    return new NonDeterminismError(next.opKey, `${entry?.kind ?? "an outcome"} at seq ${next.seq}`, instead);
  }

  private issuedInstead(): string {
    const fresh = [...this.issued].filter((key) => !this.journal.has(key));
    return fresh.length > 0 ? `issues ${fresh.map((k) => `"${k}"`).join(", ")} instead and never reaches it` : "never issues that op";
  }

  /**
   * Ends a loop iteration: refuses one that returned with an op still pending, finds a journaled op of
   * the iteration the code did not issue (returned as a divergence), then forgets the iteration's ops.
   */
  endIteration(loopKey: string, index: number, scope: Scope, forget: (key: string) => void = noop): NonDeterminismError | undefined {
    const keys = scope.keys ?? [];
    const pending = keys.find((k) => this.waiters.has(k));
    if (pending !== undefined) {
      throw new ValidationError(`Iteration ${index} of loop "${loopKey}" returned while "${pending}" was still pending: await every op the body starts.`);
    }
    const missing = this.journal.takeIteration(scope.prefix)?.find((k) => !this.issued.has(k));
    if (missing !== undefined) {
      return new NonDeterminismError(missing, `${this.journal.last(missing)?.kind ?? "an op"}`, `ends iteration ${index} without issuing it`);
    }
    for (const k of keys) {
      this.journal.forget(k);
      this.issued.delete(k);
      forget(k);
    }
    return undefined;
  }

  /**
   * When the workflow function has settled: a journaled op it never issued is a divergence, unless
   * it stopped with a Cairn error of its own (e.g. a refused manifest), which says more.
   */
  unissuedAtEnd(stoppedOnPurpose: boolean): NonDeterminismError | undefined {
    if (stoppedOnPurpose) return undefined;
    for (const key of this.journal.keys()) {
      if (!this.issued.has(key)) return new NonDeterminismError(key, `${this.journal.last(key)?.kind ?? "an op"}`, "finishes without issuing it");
    }
    return undefined;
  }
}
