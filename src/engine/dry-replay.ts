import type { ReplayReport } from "../core/deploys.js";
import { serveRequests } from "./live-ops.js";
import { NonDeterminismError, RunCancelledError, RunFailedError, StepFailedError, TimeoutError, ValidationError, isCairnError } from "../core/errors.js";
import { isOutcome, opKey as makeOpKey, opKindOf, type EntryData, type JournalEntry, type OpKind } from "../core/journal.js";
import { resumeView } from "../core/resume.js";
import { isTerminalEntry } from "../core/run.js";
import { decode, type SerializedError } from "../core/serialize.js";
import { replyOutcome } from "./ask-human.js";
import { eventName, type EventDefinition } from "./define-event.js";
import type { DecodedEntry, Outcome } from "./execution-types.js";
import { LoopDone, type LoopIteration, type WaitOptions, type Workflow, type WorkflowContext, type WorkflowLogger } from "./workflow.js";

/** The run a dry replay replays: its identity and encoded input. */
export interface DryReplayRun {
  runId: string;
  workflow: string;
  version: string;
  /** Encoded input, as stored. */
  input: string;
}

interface Scope {
  readonly prefix: string;
  readonly counters: Map<string, number>;
  readonly keys: string[] | null;
}

interface Waiter {
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const noop = () => {};
const QUIET_ROUNDS = 3;
/** The op key a divergence names when the code ends otherwise than the journal's terminal entry. */
const END_KEY = "(run end)";
/** Errors with which code refuses to run at all (a changed agent manifest, a bad op): never how a run legitimately ended. */
const REFUSALS = new Set<string>(["MANIFEST_CHANGED", "INVALID_INPUT", "WORKFLOW_NOT_REGISTERED"]);

function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const short = message.length > 160 ? `${message.slice(0, 157)}...` : message;
  return isCairnError(error) ? `${error.code} (${short})` : `an error (${short})`;
}

interface TerminalEntry {
  seq: number;
  kind: string;
  data: { error?: SerializedError; cause?: SerializedError };
}

/**
 * Replays a run's journal through the current workflow code **without executing anything**: no step
 * function, timer, event wait, child or question runs and nothing is written. Every op whose outcome
 * is journaled gets it, in journal order, exactly as on a worker's resume (same entries, loop checkpoints
 * honoured); an op with no journaled outcome never settles, so the code stops there (the frontier,
 * where a worker would go live). Divergences are found with the same rules as a worker's
 * {@link NonDeterminismError}: another op kind at a journaled key, a journaled outcome the code never
 * reaches (also when it ends before it, e.g. refusing with MANIFEST_CHANGED), a journaled op the
 * finished code never issued; and code that ends otherwise than the journal's terminal entry (throws
 * where the journal completed, returns where it failed, fails with another error code), named at op
 * `(run end)`.
 *
 * @example
 * const report = await dryReplay(research, exported.run, exported.journal);
 * if (!report.ok) console.error(report.divergence?.message);
 */
export async function dryReplay(workflow: Workflow<any, any>, run: DryReplayRun, journal: readonly JournalEntry[]): Promise<ReplayReport> {
  const replay = new DryReplay(workflow, run, await resumeView(journal));
  return replay.replay();
}

class DryReplay {
  private readonly history = new Map<string, DecodedEntry[]>();
  private readonly deliveries: { seq: number; key: string; outcome: Outcome }[] = [];
  private head = 0;
  private readonly issued = new Set<string>();
  private readonly waiters = new Map<string, Waiter>();
  private readonly journaledByScope = new Map<string, string[]>();
  private frontier: string | undefined;
  private divergence: NonDeterminismError | undefined;
  private settled: { ok: boolean; error?: unknown } | undefined;
  private delivered = 0;
  private lastSeq = 0;
  /** The journal's last run end (run.completed, run.failed …), forgotten by a later run.retried. */
  private terminal: TerminalEntry | undefined;

  constructor(
    private readonly workflow: Workflow<any, any>,
    private readonly run: DryReplayRun,
    entries: JournalEntry[],
  ) {
    this.index(entries);
  }

  async replay(): Promise<ReplayReport> {
    const ctx = this.context({ prefix: "", counters: new Map(), keys: null });
    Promise.resolve()
      .then(() => this.workflow.run(ctx, decode(this.run.input)))
      .then(
        () => (this.settled = { ok: true }),
        (error: unknown) => (this.settled = { ok: false, error }),
      );
    for (;;) {
      let quiet = 0;
      while (quiet < QUIET_ROUNDS && !this.divergence && !this.settled) {
        if (this.deliverNext()) quiet = 0;
        else quiet += 1;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      if (this.divergence) return this.report("diverged");
      if (this.settled) return this.onSettled();
      const next = this.deliveries[this.head];
      if (!next) return this.report("frontier");
      // The outcome entry the code never reached (the op's later entries, e.g. a compensation, are not it).
      const entry = this.history.get(next.key)?.find((e) => e.seq === next.seq);
      const fresh = [...this.issued].filter((key) => !this.history.has(key));
      const instead = fresh.length > 0 ? `issues ${fresh.map((k) => `"${k}"`).join(", ")} instead and never reaches it` : "never issues that op";
      this.divergence = new NonDeterminismError(next.key, `${entry?.kind ?? "an outcome"} at seq ${next.seq}`, instead);
      return this.report("diverged");
    }
  }

  private onSettled(): ReplayReport {
    const settled = this.settled!;
    const error = settled.error;
    if (!settled.ok && isCairnError(error, "NON_DETERMINISM")) {
      this.divergence = error as NonDeterminismError;
      return this.report("diverged");
    }
    const ending = settled.ok ? "returns" : `throws ${describeError(error)}`;
    // Every journaled outcome must be reached: code that ends before one (e.g. refusing with
    // MANIFEST_CHANGED at its first step) would end a live run differently from the journal.
    const next = this.deliveries[this.head];
    if (next) {
      const entry = this.history.get(next.key)?.find((e) => e.seq === next.seq);
      this.divergence = new NonDeterminismError(next.key, `${entry?.kind ?? "an outcome"} at seq ${next.seq}`, `${ending} before reaching it`);
      return this.report("diverged");
    }
    // As on a worker: journaled ops the code never reached are fine when it stopped with a Cairn error of its own.
    const stoppedOnPurpose = !settled.ok && isCairnError(error);
    const missing = stoppedOnPurpose ? undefined : [...this.history.keys()].find((key) => !this.issued.has(key));
    if (missing !== undefined) {
      this.divergence = new NonDeterminismError(missing, `${this.history.get(missing)?.at(-1)?.kind ?? "an op"}`, "finishes without issuing it");
      return this.report("diverged");
    }
    const mismatch = this.endMismatch(settled);
    if (mismatch !== undefined) {
      this.divergence = new NonDeterminismError(END_KEY, mismatch, ending);
      return this.report("diverged");
    }
    return this.report("completed");
  }

  /**
   * What the journal's end says when the code ended otherwise, or undefined when they agree. A run
   * ended from outside (cancelled, compensated on request, dead-lettered) agrees with any ending; a
   * journal with no end yet agrees with any ending but a refusal (the code rejecting itself).
   */
  private endMismatch(settled: { ok: boolean; error?: unknown }): string | undefined {
    const end = this.terminal;
    if (!end) return !settled.ok && isCairnError(settled.error) && REFUSALS.has(settled.error.code) ? "no end yet (the run was live)" : undefined;
    const at = `${end.kind} at seq ${end.seq}`;
    if (end.kind === "run.completed") return settled.ok ? undefined : at;
    if (end.kind !== "run.failed" && end.kind !== "run.compensated" && end.kind !== "run.compensation_failed") return undefined;
    const journaled = end.kind === "run.compensation_failed" ? end.data.cause : end.data.error;
    // A returned output that was too large to journal fails the run after the code returned.
    if (settled.ok) return end.kind === "run.failed" && journaled?.code !== "PAYLOAD_TOO_LARGE" ? `${at} (${journaled?.code ?? journaled?.name})` : undefined;
    const thrown = isCairnError(settled.error) ? settled.error.code : undefined;
    return thrown === journaled?.code ? undefined : `${at} (${journaled?.code ?? journaled?.name ?? "an error"})`;
  }

  private report(stoppedAt: ReplayReport["stoppedAt"]): ReplayReport {
    const ok = stoppedAt !== "diverged";
    const report: ReplayReport = {
      runId: this.run.runId,
      workflow: this.run.workflow,
      version: this.run.version,
      ok,
      replayedSeq: ok ? this.lastSeq : (this.deliveries[this.head - 1]?.seq ?? 0),
      deliveredOutcomes: this.delivered,
      stoppedAt,
    };
    if (stoppedAt === "frontier" && this.frontier !== undefined) report.frontier = this.frontier;
    const d = this.divergence;
    if (d) report.divergence = { opKey: d.opKey, expected: d.journaled, actual: d.issued, message: d.message };
    return report;
  }

  // ── the journal ──

  private index(entries: JournalEntry[]): void {
    const outcomes: { key: string; entry: DecodedEntry }[] = [];
    for (const raw of entries) {
      this.lastSeq = Math.max(this.lastSeq, raw.seq);
      if (isTerminalEntry(raw.kind)) this.terminal = { seq: raw.seq, kind: raw.kind, data: decode(raw.payload) as TerminalEntry["data"] };
      if (raw.kind === "run.retried" || raw.kind === "run.forked") this.terminal = undefined;
      if (raw.kind === "run.retried") {
        for (let i = outcomes.length - 1; i >= 0; i--) if (outcomes[i]!.entry.kind === "step.failed") outcomes.splice(i, 1);
        continue;
      }
      if (raw.opKey === null) continue;
      const entry: DecodedEntry = { seq: raw.seq, kind: raw.kind, data: decode(raw.payload) };
      let list = this.history.get(raw.opKey);
      if (!list) {
        this.history.set(raw.opKey, (list = []));
        const slash = raw.opKey.lastIndexOf("/");
        if (slash > 0) {
          const prefix = raw.opKey.slice(0, slash + 1);
          const keys = this.journaledByScope.get(prefix);
          if (keys) keys.push(raw.opKey);
          else this.journaledByScope.set(prefix, [raw.opKey]);
        }
      }
      list.push(entry);
      if (isOutcome(raw.kind, entry.data)) outcomes.push({ key: raw.opKey, entry });
    }
    for (const { key, entry } of outcomes) this.deliveries.push({ seq: entry.seq, key, outcome: this.outcomeOf(key, entry) });
  }

  /** The same values and errors a worker's Execution hands to workflow code for each outcome kind. */
  private outcomeOf(key: string, entry: DecodedEntry): Outcome {
    switch (entry.kind) {
      case "step.completed":
        return { ok: true, value: (entry.data as EntryData["step.completed"]).result };
      case "step.failed": {
        const data = entry.data as EntryData["step.failed"];
        return { ok: false, error: new StepFailedError(key, data.error, data.attempt) };
      }
      case "sleep.completed":
        return { ok: true, value: undefined };
      case "outbox.emitted":
        return { ok: true, value: { messageId: (entry.data as EntryData["outbox.emitted"]).messageId } };
      case "publish.value":
      case "request.replied":
        return { ok: true, value: undefined };
      case "event.received":
        return { ok: true, value: (entry.data as EntryData["event.received"]).payload };
      case "event.timedout": {
        const waiting = this.history.get(key)?.[0]?.data as EntryData["event.waiting"] | undefined;
        return { ok: false, error: new TimeoutError(key, `event "${waiting?.type ?? key}"`) };
      }
      case "child.completed":
        return { ok: true, value: (entry.data as EntryData["child.completed"]).output };
      case "loop.completed":
        return { ok: true, value: (entry.data as EntryData["loop.completed"]).result };
      case "human.answered":
      case "human.timedout":
        return replyOutcome(this.run.runId, key, entry.kind, entry.data);
      case "child.failed": {
        const data = entry.data as EntryData["child.failed"];
        const started = this.history.get(key)?.[0]?.data as EntryData["child.started"] | undefined;
        const childRunId = started?.childRunId ?? key;
        const reason = (data.error.data as { reason?: string } | undefined)?.reason;
        return { ok: false, error: data.status === "cancelled" ? new RunCancelledError(childRunId, reason) : new RunFailedError(childRunId, data.error) };
      }
      default:
        throw new Error(`not an outcome: ${entry.kind}`);
    }
  }

  /** Hands the next journaled outcome to its op if the code has issued it; false when it cannot. */
  private deliverNext(): boolean {
    const next = this.deliveries[this.head];
    if (!next || !this.issued.has(next.key)) return false;
    this.head += 1;
    this.delivered += 1;
    const waiter = this.waiters.get(next.key);
    this.waiters.delete(next.key);
    if (waiter) {
      if (next.outcome.ok) waiter.resolve(next.outcome.value);
      else waiter.reject(next.outcome.error);
    }
    return true;
  }

  private hasOutcome(key: string): boolean {
    for (let i = this.head; i < this.deliveries.length; i++) if (this.deliveries[i]!.key === key) return true;
    return false;
  }

  // ── ops ──

  private issue(scope: Scope, name: unknown, kind: OpKind): string {
    if (this.divergence) throw this.divergence;
    if (typeof name !== "string" || name.length === 0)
      throw new ValidationError(`Op names must be non-empty strings (got ${JSON.stringify(name)} for a ${kind}).`);
    const occurrence = scope.counters.get(name) ?? 0;
    scope.counters.set(name, occurrence + 1);
    const key = scope.prefix + makeOpKey(name, occurrence);
    scope.keys?.push(key);
    const first = this.history.get(key)?.[0];
    if (first) {
      const journaled = opKindOf(first.kind);
      if (journaled !== kind) {
        this.divergence = new NonDeterminismError(key, `a ${journaled} (${first.kind} at seq ${first.seq})`, `issues a ${kind} with that key`);
        throw this.divergence;
      }
    }
    this.issued.add(key);
    return key;
  }

  /** The op's promise: settled by its journaled outcome in journal order, or never (the frontier). */
  private await<T>(key: string): Promise<T> {
    const promise = new Promise<T>((resolve, reject) => this.waiters.set(key, { resolve: resolve as (value: unknown) => void, reject }));
    promise.catch(noop);
    if (!this.hasOutcome(key)) {
      this.waiters.delete(key);
      this.frontier ??= key;
    }
    return promise;
  }

  private context(scope: Scope): WorkflowContext {
    const self = this;
    const log: WorkflowLogger = { debug: noop, info: noop, warn: noop, error: noop };
    const op =
      <T>(kind: OpKind) =>
      (name: string): Promise<T> =>
        this.await<T>(this.issue(scope, name, kind));
    const ctx: WorkflowContext = {
      runId: this.run.runId,
      workflow: this.workflow.name,
      version: this.workflow.version,
      get replaying() {
        return self.head < self.deliveries.length;
      },
      log,
      step: (name, fn) => {
        if (typeof fn !== "function") throw new ValidationError(`ctx.step("${name}") needs a function to run.`);
        return op<never>("step")(name);
      },
      sleep: (name) => op<void>("sleep")(name),
      sleepUntil: (name) => op<void>("sleep")(name),
      waitForEvent: (type: string | EventDefinition, options?: WaitOptions) => op<never>("event")(options?.name ?? eventName(type)),
      child: (workflow, _input, options) => op<never>("child")(options?.name ?? workflow.name),
      askHuman: (request) => op<never>("human")(request?.name ?? "ask"),
      searchJournal: (_query, options) => op<never>("step")(options?.name ?? "search"),
      loop: (name, initial, body) => this.loop(scope, name, initial, body),
      emit: (topic, _payload, options) => op<never>("emit")(options?.name ?? topic),
      // An acquisition is a step named `acquire:<name>`; its release writes no outcome the code waits on here.
      acquire: (name, _resource) => {
        const key = scope.prefix + makeOpKey(`acquire:${name}`, scope.counters.get(`acquire:${name}`) ?? 0);
        return op<never>("step")(`acquire:${name}`).then((value) => ({ value, key, release: () => Promise.resolve() }));
      },
      // Unwinding ends the run: nothing after it is replayed.
      compensate: () => new Promise<never>(noop),
      publish: (name) => op<void>("publish")(`publish:${name}`),
      handle: (name, fn) => serveRequests(ctx, name, fn as (payload: unknown) => unknown, () => op<void>("request")(`reply:${name}`), Infinity),
      continueAsNew: () => new Promise<never>(noop),
      now: (name = "now") => new Date(this.value(scope, name, 0) as number),
      random: (name = "random") => this.value(scope, name, 0) as number,
      uuid: (name = "uuid") => this.value(scope, name, "00000000-0000-4000-8000-000000000000") as string,
    };
    return ctx;
  }

  /**
   * A journaled value. One the journal does not hold is where a worker would record a new one: the
   * code gets a fixed placeholder (nothing random, no clock), so it runs on to its next op.
   */
  private value(scope: Scope, name: string, placeholder: unknown): unknown {
    const key = this.issue(scope, name, "value");
    const recorded = this.history.get(key)?.[0]?.data as EntryData["value.recorded"] | undefined;
    if (recorded) return recorded.value;
    if (this.head >= this.deliveries.length) this.frontier ??= key;
    return placeholder;
  }

  private loop<S, R>(
    scope: Scope,
    name: string,
    initial: S,
    body: (state: S, iteration: LoopIteration) => Promise<S | LoopDone<R>> | S | LoopDone<R>,
  ): Promise<R> {
    if (typeof body !== "function") throw new ValidationError(`ctx.loop("${name}") needs a body function.`);
    const key = this.issue(scope, name, "loop");
    if (this.hasOutcome(key)) return this.await<R>(key);
    const snapshot = this.history.get(key)?.findLast((e) => e.kind === "loop.snapshot")?.data as EntryData["loop.snapshot"] | undefined;
    return (async () => {
      let iteration = snapshot?.iteration ?? 0;
      let state = (snapshot ? snapshot.state : initial) as S;
      for (;;) {
        const inner: Scope = { prefix: `${key}/${iteration}/`, counters: new Map(), keys: [] };
        const next = await body(state, { ctx: this.context(inner), index: iteration, done: <V>(result: V) => new LoopDone(result) });
        const journaled = this.journaledByScope.get(inner.prefix) ?? [];
        const missing = journaled.find((k) => !this.issued.has(k));
        if (missing !== undefined) {
          this.divergence = new NonDeterminismError(
            missing,
            `${this.history.get(missing)?.at(-1)?.kind ?? "an op"}`,
            `ends iteration ${iteration} without issuing it`,
          );
          throw this.divergence;
        }
        iteration += 1;
        if (next instanceof LoopDone) {
          // A worker would journal the loop's completion here: past the journal.
          this.frontier ??= key;
          return new Promise<R>(noop);
        }
        state = next;
      }
    })();
  }
}
