import { decideSlots, type BucketState, type StepFlowLimit, type StepSlotGrant, type StepSlotRequest } from "../../core/step-flow.js";
import type { StepSlotStore } from "../../core/store.js";
import type { PostgresConnection } from "./postgres-connection.js";
import {
  AHEAD_OF,
  ALL_WAITING,
  COUNT_HITS,
  COUNT_SLOTS,
  DROP_SLOT,
  FIRST_WAITER,
  HIT,
  HOLD,
  LOCK_BUCKET,
  MY_WAIT,
  PRUNE_HITS,
  PRUNE_SLOTS,
  PRUNE_WAITERS,
  QUEUE,
  UNQUEUE,
} from "./postgres-step-flow-queries.js";
import type { Tx } from "./postgres-tx.js";
import { WriteSession } from "./postgres-write.js";

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
