import type { ReplayReport } from "../core/deploys.js";
import { serveRequests } from "./live-ops.js";
import { NonDeterminismError, ValidationError, isCairnError } from "../core/errors.js";
import type { EntryData, JournalEntry, OpKind } from "../core/journal.js";
import { resumeView } from "../core/resume.js";
import { isTerminalEntry } from "../core/run.js";
import { decode, decodeKeepingSecrets, encode, type SerializedError } from "../core/serialize.js";
import type { AgentMessageRow } from "../core/store/agent-rows.js";
import { registerAgentRowOps } from "./agent-rows.js";
import { eventName, type EventDefinition } from "./define-event.js";
import { iterationScope, lastOpKey, rootScope, type Scope } from "./replay/op-keys.js";
import { ReplayCore } from "./replay/replay-core.js";
import { LoopDone, type LoopIteration, type WaitOptions, type Workflow, type WorkflowContext, type WorkflowLogger } from "./workflow.js";

/** The run a dry replay replays: its identity and encoded input. */
export interface DryReplayRun {
  runId: string;
  workflow: string;
  version: string;
  /** Encoded input, as stored. */
  input: string;
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
  const replay = new DryReplay(workflow, run, await resumeView(journal), journal);
  return replay.replay();
}

class DryReplay {
  /** The journal, the outcomes due and the ops issued: the same rules as a worker's execution. */
  private readonly core: ReplayCore;
  private frontier: string | undefined;
  private divergence: NonDeterminismError | undefined;
  private settled: { ok: boolean; error?: unknown } | undefined;
  private lastSeq = 0;
  /** The journal's last run end (run.completed, run.failed …), forgotten by a later run.retried. */
  private terminal: TerminalEntry | undefined;

  constructor(
    private readonly workflow: Workflow<any, any>,
    private readonly run: DryReplayRun,
    entries: JournalEntry[],
    /** The whole journal: an agent's message rows are read from its `agent.messages` entries. */
    private readonly all: readonly JournalEntry[],
  ) {
    this.core = new ReplayCore(run.runId);
    this.core.load(entries, {
      entry: (raw) => {
        this.lastSeq = Math.max(this.lastSeq, raw.seq);
        if (isTerminalEntry(raw.kind)) this.terminal = { seq: raw.seq, kind: raw.kind, data: decode(raw.payload) as TerminalEntry["data"] };
        if (raw.kind === "run.retried" || raw.kind === "run.forked") this.terminal = undefined;
      },
    });
  }

  async replay(): Promise<ReplayReport> {
    const ctx = this.context(rootScope());
    Promise.resolve()
      .then(() => this.workflow.run(ctx, decode(this.run.input)))
      .then(
        () => (this.settled = { ok: true }),
        (error: unknown) => (this.settled = { ok: false, error }),
      );
    let quiet = 0;
    while (quiet < QUIET_ROUNDS && !this.divergence && !this.settled) {
      if (this.core.deliverNext()) quiet = 0;
      else quiet += 1;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (this.divergence) return this.report("diverged");
    if (this.settled) return this.onSettled();
    const next = this.core.deliveries.next();
    if (!next) return this.report("frontier");
    this.divergence = this.core.unreached(next);
    return this.report("diverged");
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
    const next = this.core.deliveries.next();
    if (next) {
      this.divergence = this.core.unreached(next, `${ending} before reaching it`);
      return this.report("diverged");
    }
    // As on a worker: journaled ops the code never reached are fine when it stopped with a Cairn error of its own.
    const missing = this.core.unissuedAtEnd(!settled.ok && isCairnError(error));
    if (missing) {
      this.divergence = missing;
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
      replayedSeq: ok ? this.lastSeq : this.core.deliveries.lastSeq,
      deliveredOutcomes: this.core.deliveries.delivered,
      stoppedAt,
    };
    if (stoppedAt === "frontier" && this.frontier !== undefined) report.frontier = this.frontier;
    const d = this.divergence;
    if (d) report.divergence = { opKey: d.opKey, expected: d.journaled, actual: d.issued, message: d.message };
    return report;
  }

  // ── ops ──

  private issue(scope: Scope, name: unknown, kind: OpKind): string {
    if (this.divergence) throw this.divergence;
    return this.core.issue(scope, name, kind, (error) => (this.divergence = error));
  }

  /** The op's promise: settled by its journaled outcome in journal order, or never (the frontier). */
  private await<T>(key: string): Promise<T> {
    const promise = this.core.wait<T>(key);
    if (!this.core.deliveries.has(key)) {
      this.core.waiters.delete(key);
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
        return self.core.deliveries.remaining > 0;
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
      // A dry replay reads no secrets: a credential is a placeholder (the steps that use it do not run).
      credential: (name) => Promise.resolve(`[credential ${String(name)}]`),
      acquire: (name, _resource) => {
        const acquired = op<never>("step")(`acquire:${name}`);
        const key = lastOpKey(scope, `acquire:${name}`);
        return acquired.then((value) => ({ value, key, release: () => Promise.resolve() }));
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
    registerAgentRowOps(ctx, {
      append: (name) => void this.issue(scope, name, "messages"),
      read: async (fromSeq, throughSeq) => this.agentMessages(fromSeq, throughSeq),
    });
    return ctx;
  }

  /** Message rows as the store would project them, from the journal's `agent.messages` entries. */
  private agentMessages(fromSeq: number, throughSeq: number): AgentMessageRow[] {
    const rows: AgentMessageRow[] = [];
    for (const entry of this.all) {
      if (entry.kind !== "agent.messages") continue;
      const data = decodeKeepingSecrets<EntryData["agent.messages"]>(entry.payload);
      for (const m of data.messages) {
        if (m.seq < fromSeq || m.seq > throughSeq) continue;
        const kind = m.kind === "summary" ? "summary" : "message";
        rows.push({
          runId: this.run.runId,
          seq: m.seq,
          turn: m.turn,
          role: m.role,
          kind,
          content: encode(m.content ?? null),
          journalSeq: entry.seq,
          createdAt: entry.at,
        });
      }
    }
    return rows.sort((a, b) => a.seq - b.seq);
  }

  /**
   * A journaled value. One the journal does not hold is where a worker would record a new one: the
   * code gets a fixed placeholder (nothing random, no clock), so it runs on to its next op.
   */
  private value(scope: Scope, name: string, placeholder: unknown): unknown {
    const key = this.issue(scope, name, "value");
    const recorded = this.core.journal.first(key)?.data as EntryData["value.recorded"] | undefined;
    if (recorded) return recorded.value;
    if (this.core.deliveries.remaining === 0) this.frontier ??= key;
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
    if (this.core.deliveries.has(key)) return this.await<R>(key);
    const snapshot = this.core.journal.entries(key).findLast((e) => e.kind === "loop.snapshot")?.data as EntryData["loop.snapshot"] | undefined;
    return (async () => {
      let iteration = snapshot?.iteration ?? 0;
      let state = (snapshot ? snapshot.state : initial) as S;
      for (;;) {
        const inner = iterationScope(key, iteration);
        const next = await body(state, { ctx: this.context(inner), index: iteration, done: <V>(result: V) => new LoopDone(result) });
        const divergence = this.core.endIteration(key, iteration, inner);
        if (divergence) {
          this.divergence = divergence;
          throw divergence;
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
