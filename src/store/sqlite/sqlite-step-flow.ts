import type Database from "better-sqlite3";
import type { StepSlotStore } from "../../core/store.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import {
  AHEAD_OF,
  ALL_WAITING,
  COUNT_HITS,
  COUNT_SLOTS,
  DROP_SLOT,
  FIRST_WAITER,
  HIT,
  HOLD,
  MY_WAIT,
  PRUNE_HITS,
  PRUNE_SLOTS,
  PRUNE_WAITERS,
  QUEUE,
  UNQUEUE,
} from "./sqlite-step-flow-queries.js";
import type { SqliteWriter } from "./sqlite-write.js";
import { decideSlots, type BucketState, type StepFlowLimit, type StepSlotGrant, type StepSlotRequest } from "../../core/step-flow.js";

/**
 * Step flow control statements of {@link SqliteStepSlots} (see `Store.acquireStepSlots`).
 * Every method runs inside the caller's write transaction (SQLite has one writer at a time), so
 * counting, then taking or queueing, is atomic across worker processes sharing the file.
 */
export class SqliteStepFlow {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly wake: (runId: string, now: number) => void,
  ) {}

  private sql(text: string): Database.Statement {
    let statement = this.cache.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.cache.set(text, statement);
    }
    return statement;
  }

  acquire(request: StepSlotRequest, now: number): StepSlotGrant {
    const states = request.limits.map((limit) => this.state(limit, request, now));
    const grant = decideSlots(request.limits, states, now);
    const op = { bucket: "", runId: request.runId, opKey: request.opKey };
    for (const limit of request.limits) {
      const params = { ...op, bucket: limit.bucket };
      if (!grant.granted) {
        this.sql(QUEUE).run({ ...params, now });
        continue;
      }
      this.sql(UNQUEUE).run(params);
      if (limit.kind === "rate") this.sql(HIT).run(limit.bucket, now);
      else {
        this.sql(HOLD).run({
          ...params,
          epoch: request.epoch,
          now,
        });
      }
      this.wakeFirst(limit.bucket, now);
    }
    return grant;
  }

  release(runId: string, opKey: string, buckets: readonly string[], now: number): void {
    for (const bucket of buckets) {
      this.sql(DROP_SLOT).run(bucket, runId, opKey);
      this.wakeFirst(bucket, now);
    }
  }

  private state(limit: StepFlowLimit, request: StepSlotRequest, now: number): BucketState {
    const bucket = limit.bucket;
    this.sql(PRUNE_WAITERS).run(bucket);
    const mine = this.sql(MY_WAIT).get(bucket, request.runId, request.opKey) as { id: number; since: number } | undefined;
    const ahead = mine
      ? (
          this.sql(AHEAD_OF).get({
            bucket,
            ...mine,
          }) as { n: number }
        ).n
      : (this.sql(ALL_WAITING).get(bucket) as { n: number }).n;
    if (limit.kind === "rate") {
      this.sql(PRUNE_HITS).run(bucket, now - limit.periodMs!);
      const row = this.sql(COUNT_HITS).get(bucket) as { n: number; oldest: number | null };
      return { used: row.n, ahead, nextFree: row.oldest === null ? null : row.oldest + limit.periodMs! };
    }
    this.sql(PRUNE_SLOTS).run({
      bucket,
      now,
      runId: request.runId,
      opKey: request.opKey,
    });
    const row = this.sql(COUNT_SLOTS).get(bucket) as { n: number; nextFree: number | null };
    return { used: row.n, ahead, nextFree: row.nextFree };
  }

  private wakeFirst(bucket: string, now: number): void {
    const first = this.sql(FIRST_WAITER).get(bucket) as { runId: string } | undefined;
    if (first) this.wake(first.runId, now);
  }
}

/** The {@link StepSlotStore} part of {@link SqliteStore}: step flow control, each call one write transaction. */
export class SqliteStepSlots implements StepSlotStore {
  private statements: SqliteStepFlow | undefined;

  constructor(
    private readonly c: SqliteConnection,
    private readonly w: SqliteWriter,
  ) {}

  /** See {@link Store.acquireStepSlots}. */
  async acquireStepSlots(request: StepSlotRequest, now: number): Promise<StepSlotGrant> {
    return this.c.immediate(() => this.stepFlow.acquire(request, now));
  }

  /** See {@link Store.releaseStepSlots}. */
  async releaseStepSlots(runId: string, opKey: string, buckets: readonly string[], now: number): Promise<void> {
    return this.c.immediate(() => this.stepFlow.release(runId, opKey, buckets, now));
  }

  /** Step flow control (prepared on first use); wakes a waiter like an event does. */
  private get stepFlow(): SqliteStepFlow {
    return (this.statements ??= new SqliteStepFlow(this.c.db, (runId, now) => {
      const run = this.w.loadState(runId);
      if (run) this.w.wake(run, now);
    }));
  }
}
