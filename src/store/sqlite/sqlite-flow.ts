import type Database from "better-sqlite3";
import { isStart, pickQueued, queueAllowance, type QueueLimits, type QueueStat, type RunFlow } from "../../core/flow-control.js";
import type { RunRecord } from "../../core/run.js";
import type { ClaimRequest } from "../../core/store.js";
import {
  ANY_QUEUED_DUE,
  COUNT_RUNNING,
  COUNT_STARTED,
  FIND_DEBOUNCED,
  MARK_STARTED,
  QUEUE_STATS,
  REBOUNCE,
  RUNNING_BY_KEY,
  SET_DEBOUNCE,
  SET_FLOW,
  queueCandidatesQuery,
} from "./sqlite-flow-queries.js";
import type { StateRow } from "./sqlite-rows.js";

type Candidate = StateRow & { concurrencyKey: string | null; qPriority: number; claimKey: number };

/** How many candidates past the free slots a queued claim reads, so runs skipped for their key do not starve the rest. */
const CANDIDATE_SLACK = 32;

/**
 * Flow control for {@link SqliteStore}: the queue columns of new runs and the queued part of a claim.
 * Used only for queued runs and by claims that name queues, so the unqueued paths run no statement of it.
 * Every method runs inside the caller's write transaction, so counting then claiming is atomic
 * (SQLite has one writer at a time).
 */
export class SqliteFlow {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  private prepared(text: string): Database.Statement {
    let statement = this.cache.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.cache.set(text, statement);
    }
    return statement;
  }

  /** Writes the queue columns of a run just inserted. */
  setFlow(runId: string, flow: RunFlow): void {
    this.prepared(SET_FLOW).run(flow.queue, flow.concurrencyKey, flow.priority, runId);
  }

  /** See `Store.queueStats`. */
  stats(now: number): QueueStat[] {
    return this.prepared(QUEUE_STATS).all({ now }) as QueueStat[];
  }

  /** The run of `workflow` with debounce key `key` that has not started, if any. */
  findDebounced(workflow: string, key: string): string | undefined {
    const row = this.prepared(FIND_DEBOUNCED).get(workflow, key) as { runId: string } | undefined;
    return row?.runId;
  }

  /** Writes a debounced run's new input and start. */
  rebounce(run: RunRecord): void {
    this.prepared(REBOUNCE).run(run.input, run.wakeAt, run.lastSeq, run.updatedAt, run.runId);
  }

  /** Writes the debounce key (and queue columns) of a debounced run just inserted. */
  setDebounce(runId: string, key: string, flow: RunFlow | undefined): void {
    this.prepared(SET_DEBOUNCE).run(key, flow?.queue ?? null, flow?.concurrencyKey ?? null, flow?.priority ?? 0, runId);
  }

  /** True when some run of the request's queues is pending or due (limits aside): a plain read, no lock. */
  anyDue(request: ClaimRequest): boolean {
    const names = (request.queues ?? []).map((q) => q.name);
    return this.prepared(ANY_QUEUED_DUE).get(JSON.stringify(names), request.now) !== undefined;
  }

  /**
   * The queued runs this claim may take, at most `max`, queue by queue in the request's order;
   * first starts are stamped (`started_at`) for the rate limit. Call inside the claim's transaction.
   */
  pick(request: ClaimRequest, max: number): StateRow[] {
    const out: StateRow[] = [];
    for (const limits of request.queues ?? []) {
      if (out.length >= max) break;
      for (const row of this.pickQueue(request, limits, max - out.length)) {
        const { concurrencyKey: _k, qPriority: _p, claimKey: _c, ...state } = row;
        if (isStart(state)) this.prepared(MARK_STARTED).run(request.now, state.runId);
        out.push(state);
      }
    }
    return out;
  }

  private pickQueue(request: ClaimRequest, limits: QueueLimits, max: number): Candidate[] {
    const running = limits.concurrency === null ? 0 : this.count(COUNT_RUNNING, limits.name);
    const started = limits.rateLimit === null ? 0 : this.count(COUNT_STARTED, limits.name, request.now - limits.rateLimit.perMs);
    const allowance = queueAllowance(limits, running, started);
    const room = Math.min(allowance.slots, max);
    if (room <= 0) return [];
    const candidates = this.candidates(request, limits, room + CANDIDATE_SLACK);
    if (candidates.length === 0) return [];
    const keys = [...new Set(candidates.flatMap((c) => (c.concurrencyKey === null ? [] : [c.concurrencyKey])))];
    const byKey = new Map<string, number>();
    if (limits.perKeyConcurrency !== null && keys.length > 0) {
      const rows = this.prepared(RUNNING_BY_KEY).all(limits.name, JSON.stringify(keys)) as { k: string; n: number }[];
      for (const row of rows) byKey.set(row.k, row.n);
    }
    return pickQueued(candidates, limits, allowance, byKey, room);
  }

  private count(sql: string, ...params: unknown[]): number {
    return (this.prepared(sql).get(...params) as { n: number }).n;
  }

  /** Pending and due runs of one queue in claim order (priority desc, then oldest wake-up), skipping keys already at their limit. */
  private candidates(request: ClaimRequest, limits: QueueLimits, limit: number): Candidate[] {
    const pairs = request.workflows.flatMap((w) => [w.name, w.version]);
    const sql = queueCandidatesQuery(request.workflows.length, limits.perKeyConcurrency !== null);
    // Positional parameters are the (workflow, version) pairs of each part, in order.
    const named: Record<string, unknown> = { queue: limits.name, now: request.now, limit };
    if (limits.perKeyConcurrency !== null) named.perKey = limits.perKeyConcurrency;
    return this.prepared(sql).all(...pairs, ...pairs, named) as Candidate[];
  }
}
