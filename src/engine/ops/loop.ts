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
    // result is delivered in order and the body never runs.
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
    this.open.add(open);
    let iteration = snapshot?.iteration ?? 0;
    let state = (snapshot ? snapshot.state : initial) as S;
    try {
      for (;;) {
        const scope = iterationScope(key, iteration);
        const index = iteration;
        const next = await body(state, { ctx: exec.makeContext(scope), index, done: <V>(result: V) => new LoopDone(result) });
        if (exec.isSettled) return;
        this.endIteration(key, index, scope);
        iteration += 1;
        if (next instanceof LoopDone) {
          // The completion supersedes the loop's range: every other op's entry in it must have its seq.
          if (open.foreignInFlight > 0) await new Promise<void>((resolve) => (open.onForeignCommitted = resolve));
          if (exec.isSettled) return;
          const { entry, value } = journaledValue(
            "loop.completed",
            key,
            { result: next.result, iterations: iteration, from: open.from, keep: [...open.keep] },
            (copy) => copy.result,
            maxBytes,
            `The result of loop "${key}"`,
          );
          this.open.delete(open);
          exec.commitOutcome(key, [entry], { ok: true, value });
          return;
        }
        state = next;
        if (snapshotEvery > 0 && iteration % snapshotEvery === 0) {
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
      if (!entries.some((entry) => entry.opKey !== null && entry.opKey !== open.key && !entry.opKey.startsWith(open.prefix))) continue;
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

  /** Records an entry of some other op written while loops run: their checkpoints must keep it. */
  noteForeign(opKey: string, seq: number): void {
    for (const open of this.open) {
      if (seq >= open.from && opKey !== open.key && !opKey.startsWith(open.prefix)) open.keep.add(seq);
    }
  }
}
