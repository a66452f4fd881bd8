import type Database from "better-sqlite3";
import type { StepSlotStore } from "../../core/store.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import type { SqliteWriter } from "./sqlite-write.js";
import { decideSlots, type BucketState, type StepFlowLimit, type StepSlotGrant, type StepSlotRequest } from "../../core/step-flow.js";

const LIVE_HOLDER = `EXISTS (SELECT 1 FROM runs r WHERE r.run_id = s.run_id AND r.status = 'running' AND r.lease_epoch = s.epoch AND r.lease_expires_at > @now)`;
const LIVE_WAITER = `EXISTS (SELECT 1 FROM runs r WHERE r.run_id = w.run_id AND r.status IN ('pending', 'running', 'suspended'))`;

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
        this.sql("INSERT OR IGNORE INTO step_flow_waiters (bucket, run_id, op_key, since) VALUES (@bucket, @runId, @opKey, @now)").run({ ...params, now });
        continue;
      }
      this.sql("DELETE FROM step_flow_waiters WHERE bucket = @bucket AND run_id = @runId AND op_key = @opKey").run(params);
      if (limit.kind === "rate") this.sql("INSERT INTO step_flow_hits (bucket, at) VALUES (?, ?)").run(limit.bucket, now);
      else {
        this.sql("INSERT INTO step_flow_slots (bucket, run_id, op_key, epoch, acquired_at) VALUES (@bucket, @runId, @opKey, @epoch, @now)").run({
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
      this.sql("DELETE FROM step_flow_slots WHERE bucket = ? AND run_id = ? AND op_key = ?").run(bucket, runId, opKey);
      this.wakeFirst(bucket, now);
    }
  }

  private state(limit: StepFlowLimit, request: StepSlotRequest, now: number): BucketState {
    const bucket = limit.bucket;
    this.sql(`DELETE FROM step_flow_waiters AS w WHERE bucket = ? AND NOT ${LIVE_WAITER}`).run(bucket);
    const mine = this.sql("SELECT id, since FROM step_flow_waiters WHERE bucket = ? AND run_id = ? AND op_key = ?").get(
      bucket,
      request.runId,
      request.opKey,
    ) as { id: number; since: number } | undefined;
    const ahead = mine
      ? (
          this.sql("SELECT COUNT(*) AS n FROM step_flow_waiters WHERE bucket = @bucket AND (since < @since OR (since = @since AND id < @id))").get({
            bucket,
            ...mine,
          }) as { n: number }
        ).n
      : (this.sql("SELECT COUNT(*) AS n FROM step_flow_waiters WHERE bucket = ?").get(bucket) as { n: number }).n;
    if (limit.kind === "rate") {
      this.sql("DELETE FROM step_flow_hits WHERE bucket = ? AND at <= ?").run(bucket, now - limit.periodMs!);
      const row = this.sql("SELECT COUNT(*) AS n, MIN(at) AS oldest FROM step_flow_hits WHERE bucket = ?").get(bucket) as { n: number; oldest: number | null };
      return { used: row.n, ahead, nextFree: row.oldest === null ? null : row.oldest + limit.periodMs! };
    }
    // A holder that is not live (crashed and its lease expired, or moved on) holds nothing; this op's own old row goes too.
    this.sql(`DELETE FROM step_flow_slots AS s WHERE bucket = @bucket AND (NOT ${LIVE_HOLDER} OR (run_id = @runId AND op_key = @opKey))`).run({
      bucket,
      now,
      runId: request.runId,
      opKey: request.opKey,
    });
    const row = this.sql(
      "SELECT COUNT(*) AS n, MIN(r.lease_expires_at) AS nextFree FROM step_flow_slots s JOIN runs r ON r.run_id = s.run_id WHERE s.bucket = ?",
    ).get(bucket) as { n: number; nextFree: number | null };
    return { used: row.n, ahead, nextFree: row.nextFree };
  }

  private wakeFirst(bucket: string, now: number): void {
    const first = this.sql("SELECT run_id AS runId FROM step_flow_waiters WHERE bucket = ? ORDER BY since, id LIMIT 1").get(bucket) as
      { runId: string } | undefined;
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
