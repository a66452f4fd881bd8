import { decideSlots, type BucketState, type StepFlowLimit, type StepSlotGrant, type StepSlotRequest } from "../../core/step-flow.js";
import type { StepSlotStore } from "../../core/store.js";
import type { PostgresConnection } from "./postgres-connection.js";
import type { Tx } from "./postgres-tx.js";
import { WriteSession } from "./postgres-write.js";

/** Serialises the requests of one bucket until their transaction commits (like the queue lock of postgres-flow.ts). */
const LOCK_BUCKET = "SELECT pg_advisory_xact_lock(hashtext('cairn.step'), hashtext(current_schema() || '/' || $1))";
const PRUNE_WAITERS = `DELETE FROM step_flow_waiters w WHERE w.bucket = $1
  AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = w.run_id AND r.status IN ('pending', 'running', 'suspended'))`;
const MY_WAIT = `SELECT id, since FROM step_flow_waiters WHERE bucket = $1 AND run_id = $2 AND op_key = $3`;
const AHEAD_OF = `SELECT COUNT(*)::int AS n FROM step_flow_waiters WHERE bucket = $1 AND (since < $2 OR (since = $2 AND id < $3))`;
const ALL_WAITING = `SELECT COUNT(*)::int AS n FROM step_flow_waiters WHERE bucket = $1`;
const PRUNE_HITS = `DELETE FROM step_flow_hits WHERE bucket = $1 AND at <= $2`;
const COUNT_HITS = `SELECT COUNT(*)::int AS n, MIN(at) AS oldest FROM step_flow_hits WHERE bucket = $1`;
// A holder that is not live (crashed and its lease expired, or moved on) holds nothing; the op's own old row goes too.
const PRUNE_SLOTS = `DELETE FROM step_flow_slots s WHERE s.bucket = $1 AND (
  NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = s.run_id AND r.status = 'running' AND r.lease_epoch = s.epoch AND r.lease_expires_at > $2)
  OR (s.run_id = $3 AND s.op_key = $4))`;
const COUNT_SLOTS = `SELECT COUNT(*)::int AS n, MIN(r.lease_expires_at) AS "nextFree" FROM step_flow_slots s JOIN runs r ON r.run_id = s.run_id WHERE s.bucket = $1`;
const QUEUE = `INSERT INTO step_flow_waiters (bucket, run_id, op_key, since) VALUES ($1, $2, $3, $4) ON CONFLICT (bucket, run_id, op_key) DO NOTHING`;
const UNQUEUE = `DELETE FROM step_flow_waiters WHERE bucket = $1 AND run_id = $2 AND op_key = $3`;
const HIT = `INSERT INTO step_flow_hits (bucket, at) VALUES ($1, $2)`;
const HOLD = `INSERT INTO step_flow_slots (bucket, run_id, op_key, epoch, acquired_at) VALUES ($1, $2, $3, $4, $5)`;
const DROP_SLOT = `DELETE FROM step_flow_slots WHERE bucket = $1 AND run_id = $2 AND op_key = $3`;
const FIRST_WAITER = `SELECT run_id AS "runId" FROM step_flow_waiters WHERE bucket = $1 ORDER BY since, id LIMIT 1`;

/** The {@link StepSlotStore} part of {@link PostgresStore}: step flow control, each call one transaction. */
export class PostgresStepSlots implements StepSlotStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.acquireStepSlots}. */
  async acquireStepSlots(request: StepSlotRequest, now: number): Promise<StepSlotGrant> {
    return this.db.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      const grant = await acquireStepSlots(tx, session, request);
      await session.flush();
      return grant;
    });
  }

  /** See {@link Store.releaseStepSlots}. */
  async releaseStepSlots(runId: string, opKey: string, buckets: readonly string[], now: number): Promise<void> {
    await this.db.tx(now, async (tx) => {
      const session = new WriteSession(tx);
      await releaseStepSlots(tx, session, runId, opKey, buckets);
      await session.flush();
    });
  }
}

const num = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value));

/**
 * Step flow control of the PostgreSQL store (see `Store.acquireStepSlots`), inside the caller's
 * transaction: the buckets are locked (in name order, so two requests never wait on each other in a
 * cycle), counted, then taken or queued.
 */
export async function acquireStepSlots(tx: Tx, session: WriteSession, request: StepSlotRequest): Promise<StepSlotGrant> {
  const now = tx.now;
  for (const bucket of [...new Set(request.limits.map((l) => l.bucket))].sort()) await tx.query(LOCK_BUCKET, [bucket]);
  const states: BucketState[] = [];
  for (const limit of request.limits) states.push(await bucketState(tx, limit, request, now));
  const grant = decideSlots(request.limits, states, now);
  for (const limit of request.limits) {
    const op = [limit.bucket, request.runId, request.opKey];
    if (!grant.granted) {
      await tx.query(QUEUE, [...op, now]);
      continue;
    }
    await tx.query(UNQUEUE, op);
    if (limit.kind === "rate") await tx.query(HIT, [limit.bucket, now]);
    else await tx.query(HOLD, [...op, request.epoch, now]);
    await wakeFirst(tx, session, limit.bucket);
  }
  return grant;
}

/** Gives back concurrency slots and wakes the first waiter of each bucket. */
export async function releaseStepSlots(tx: Tx, session: WriteSession, runId: string, opKey: string, buckets: readonly string[]): Promise<void> {
  for (const bucket of [...buckets].sort()) await tx.query(LOCK_BUCKET, [bucket]);
  for (const bucket of buckets) {
    await tx.query(DROP_SLOT, [bucket, runId, opKey]);
    await wakeFirst(tx, session, bucket);
  }
}

async function bucketState(tx: Tx, limit: StepFlowLimit, request: StepSlotRequest, now: number): Promise<BucketState> {
  const bucket = limit.bucket;
  await tx.query(PRUNE_WAITERS, [bucket]);
  const [mine] = await tx.query<{ id: string; since: string }>(MY_WAIT, [bucket, request.runId, request.opKey]);
  const [counted] = mine ? await tx.query<{ n: number }>(AHEAD_OF, [bucket, mine.since, mine.id]) : await tx.query<{ n: number }>(ALL_WAITING, [bucket]);
  const ahead = counted?.n ?? 0;
  if (limit.kind === "rate") {
    await tx.query(PRUNE_HITS, [bucket, now - limit.periodMs!]);
    const [row] = await tx.query<{ n: number; oldest: string | null }>(COUNT_HITS, [bucket]);
    const oldest = num(row?.oldest);
    return { used: row?.n ?? 0, ahead, nextFree: oldest === null ? null : oldest + limit.periodMs! };
  }
  await tx.query(PRUNE_SLOTS, [bucket, now, request.runId, request.opKey]);
  const [row] = await tx.query<{ n: number; nextFree: string | null }>(COUNT_SLOTS, [bucket]);
  return { used: row?.n ?? 0, ahead, nextFree: num(row?.nextFree) };
}

async function wakeFirst(tx: Tx, session: WriteSession, bucket: string): Promise<void> {
  const [first] = await tx.query<{ runId: string }>(FIRST_WAITER, [bucket]);
  if (!first) return;
  await session.wake(first.runId);
  tx.wake();
}
