import { ValidationError } from "../../core/errors.js";
import { newEntry, type EntryData, type NewEntry } from "../../core/journal.js";
import { crashPoint } from "../crash-points.js";
import { journaledValue } from "../journaled-value.js";
import { iterationScope, type Scope } from "../replay/op-keys.js";
import { LoopDone, type LoopIteration, type LoopOptions } from "../workflow.js";
import type { OpScheduler } from "./op-scheduler.js";

/** A loop being run: what its checkpoints supersede. */
interface OpenLoop {
  readonly key: string;
  readonly prefix: string;
  /** The seq after its `loop.started`. */
  readonly from: number;
  /** Seqs from `from` on that belong to other ops, which a resume must still read. */
  readonly keep: Set<number>;
  /** Writes with entries of other ops not yet committed: their seqs are not known, so no snapshot now. */
  foreignInFlight: number;
  /** Called when `foreignInFlight` drops to 0. */
  onForeignCommitted: (() => void) | null;
}

type Body<S, R> = (state: S, iteration: LoopIteration) => Promise<S | LoopDone<R>> | S | LoopDone<R>;

const noop = () => {};

/**
 * The run's `ctx.loop`s: each iteration's ops are issued under `<loopKey>/<iteration>/`, checked and
 * forgotten when the iteration ends; snapshots and the completion supersede the loop's range of the
 * journal, keeping the seqs of other ops' entries written meanwhile.
 */
export class Loops {
  private readonly open = new Set<OpenLoop>();

  constructor(
    private readonly exec: OpScheduler,
    /** Forgets what the execution holds for an ended iteration's op. */
    private readonly forget: (key: string) => void,
  ) {}

  /** `ctx.loop`. */
  loop<S, R>(scope: Scope, name: string, initial: S, body: Body<S, R>, options: LoopOptions = {}): Promise<R> {
    if (typeof body !== "function") throw new ValidationError(`ctx.loop("${name}") needs a body function.`);
    const snapshotEvery = options.snapshotEvery ?? 10;
    if (!Number.isSafeInteger(snapshotEvery) || snapshotEvery < 0) {
      throw new ValidationError(`ctx.loop("${name}"): snapshotEvery must be a whole number of iterations, 0 or more (got ${String(options.snapshotEvery)}).`);
    }
    const exec = this.exec;
    const key = exec.issue(scope, name, "loop");
    // Workflow code, not an effect: it runs during replay, and does not count as in flight (its ops
    // do), so a loop waiting on an event still lets the run suspend. A completed loop's journaled
    // result is delivered in order and the body never runs, unless its iterations registered
    // compensations: then the body replays, so that their compensate functions exist again.
    if (exec.replay.deliveries.has(key) && exec.saga.hasCompensationsUnder(`${key}/`)) {
      const result = exec.registerOp<R>(key, noop, noop);
      void this.run(key, initial, body, snapshotEvery).catch((error: unknown) => exec.onInternalError(key, error));
      return result;
    }
    return exec.registerOp<R>(
      key,
      noop,
      () =>
        void this.run(key, initial, body, snapshotEvery).catch((error: unknown) => {
          const waiter = exec.replay.waiters.get(key);
          exec.replay.waiters.delete(key);
          waiter?.reject(error);
        }),
    );
  }

  private async run<S, R>(key: string, initial: S, body: Body<S, R>, snapshotEvery: number): Promise<void> {
    const exec = this.exec;
    const maxBytes = exec.hostRef.maxPayloadBytes;
    const journaled = exec.replay.journal.entries(key);
    const startedSeq = journaled.find((entry) => entry.kind === "loop.started")?.seq ?? (await exec.write([newEntry("loop.started", key, { snapshotEvery })]));
    const snapshot = journaled.findLast((entry) => entry.kind === "loop.snapshot")?.data as EntryData["loop.snapshot"] | undefined;
    const open: OpenLoop = { key, prefix: `${key}/`, from: startedSeq + 1, keep: new Set(snapshot?.keep), foreignInFlight: 0, onForeignCommitted: null };
    // Entries of other ops written since the loop started, read on this resume: later checkpoints keep them too.
    for (const [other, entries] of exec.replay.journal) {
      if (other === key || other.startsWith(open.prefix)) continue;
      for (const entry of entries) if (entry.seq >= open.from) open.keep.add(entry.seq);
    }
    // And the saga's entries of its iterations (compensations registered, cleanup actions): they outlive the iterations.
    for (const kept of exec.saga.keptEntries()) if (kept.seq >= open.from && kept.key.startsWith(open.prefix)) open.keep.add(kept.seq);
    this.open.add(open);
    let iteration = snapshot?.iteration ?? 0;
    let state = (snapshot ? snapshot.state : initial) as S;
    try {
      for (;;) {
        const scope = iterationScope(key, iteration);
        const index = iteration;
        const next = await body(state, { ctx: exec.makeContext(scope), index, done: <V>(result: V) => new LoopDone(result) });
        if (exec.isSettled) return;
        // A resource acquired in an iteration is held until the iteration ends at the latest.
        if (exec.saga.holdsUnder(scope.prefix)) {
          await exec.inFlight(() =>
            exec.saga.releaseUnder(exec, scope.prefix, (resource, error) =>
              exec.hostRef.logger.log("warn", "a loop iteration's resource could not be released", { runId: exec.runId, opKey: resource, error }),
            ),
          );
          if (exec.isSettled) return;
        }
        this.endIteration(key, index, scope);
        iteration += 1;
        if (next instanceof LoopDone) {
          // Replayed to its journaled completion (see loop()): delivered from the journal.
          if (journaled.some((entry) => entry.kind === "loop.completed")) return;
          // The completion supersedes the loop's range: every other op's entry in it must have its seq.
          if (open.foreignInFlight > 0) await new Promise<void>((resolve) => (open.onForeignCommitted = resolve));
          if (exec.isSettled) return;
          const { entry, value } = journaledValue(
            "loop.completed",
            key,
            { result: next.result, iterations: iteration, from: this.checkpointFrom(open), keep: [...open.keep] },
            (copy) => copy.result,
            maxBytes,
            `The result of loop "${key}"`,
          );
          this.open.delete(open);
          exec.commitOutcome(key, [entry], { ok: true, value });
          return;
        }
        state = next;
        if (snapshotEvery > 0 && iteration % snapshotEvery === 0 && !exec.saga.hasCompensationsUnder(open.prefix)) {
          const { entry, value } = journaledValue(
            "loop.snapshot",
            key,
            { iteration, state, from: open.from, keep: [...open.keep] },
            (copy) => copy.state,
            maxBytes,
            `The state of loop "${key}"`,
          );
          // Queued before the next iteration issues anything, so it lands before that iteration's entries.
          // Skipped while another op's entries are in flight (their seqs, to keep, are unknown yet):
          // the next snapshot covers this one's ground.
          if (open.foreignInFlight === 0) {
            exec.write([entry]).then(
              () => crashPoint("after-snapshot", key),
              (error: unknown) => exec.onInternalError(key, error),
            );
          }
          // Go on with the copy a resume would load, so live and resumed runs see the same state.
          state = value as S;
        }
      }
    } finally {
      this.open.delete(open);
    }
  }

  /** Where a checkpoint's superseded range starts: nowhere when iterations registered compensations (see loop()). */
  private checkpointFrom(open: OpenLoop): number {
    return this.exec.saga.hasCompensationsUnder(open.prefix) ? Number.MAX_SAFE_INTEGER : open.from;
  }

  /** Checks an iteration against the journal, then forgets its ops so a long loop holds no history. */
  private endIteration(key: string, index: number, scope: Scope): void {
    const error = this.exec.replay.endIteration(key, index, scope, this.forget);
    if (error) {
      this.exec.failNonDeterminism(error);
      throw error;
    }
  }

  /** True while some loop runs (writes then watch for other ops' entries). */
  get running(): boolean {
    return this.open.size > 0;
  }

  /**
   * Marks the open loops for which these entries are another op's: their snapshots wait until the
   * write commits. Returns the function to call once it has (committed or failed).
   */
  watchForeign(entries: NewEntry[]): (() => void) | null {
    let watched: OpenLoop[] | null = null;
    for (const open of this.open) {
      if (!entries.some((entry) => entry.opKey !== null && outlivesLoop(open, entry.opKey, entry.kind, entry.data))) continue;
      open.foreignInFlight += 1;
      (watched ??= []).push(open);
    }
    if (!watched) return null;
    return () => {
      for (const open of watched) {
        open.foreignInFlight -= 1;
        if (open.foreignInFlight === 0) open.onForeignCommitted?.();
      }
    };
  }

  /** Records an entry written while loops run: their checkpoints keep it if it is another op's or the saga's. */
  noteForeign(entry: NewEntry & { opKey: string }, seq: number): void {
    for (const open of this.open) {
      if (seq >= open.from && outlivesLoop(open, entry.opKey, entry.kind, entry.data)) open.keep.add(seq);
    }
  }
}

/**
 * True for an entry the loop's checkpoints must keep: another op's, or one of the saga's written in
 * an iteration (a compensation's registration or its cleanup actions, which outlive the iteration).
 */
function outlivesLoop(open: OpenLoop, opKey: string, kind: string, data: unknown): boolean {
  if (opKey === open.key) return false;
  if (!opKey.startsWith(open.prefix)) return true;
  return kind.startsWith("compensation.") || (kind === "step.completed" && (data as EntryData["step.completed"]).compensable === true);
}
