import { isStart, pickQueued, queueAllowance, type QueueLimits, type QueueStat, type RunFlow } from "../../core/flow-control.js";
import type { RunRecord } from "../../core/run.js";
import type { ClaimRequest, NewRun } from "../../core/store.js";
import { newDebouncedRun, rebounce } from "../common/debounce.js";
import { INSERT_ENTRIES } from "./postgres-journal-queries.js";
import { INSERT_RUN } from "./postgres-runs-queries.js";
import {
  CANDIDATES,
  COUNT_RUNNING,
  COUNT_STARTED,
  FIND_DEBOUNCED,
  LOCK_DEBOUNCE,
  LOCK_QUEUE,
  MARK_STARTED,
  QUEUE_STATS,
  REBOUNCE,
  RUNNING_BY_KEY,
  SET_DEBOUNCE,
  SET_FLOWS,
} from "./postgres-flow-queries.js";
import type { Sql } from "./postgres-queries.js";
import { entryArrays, runValues, toRun, type StateRow } from "./postgres-rows.js";
import type { Tx } from "./postgres-tx.js";

type Candidate = StateRow & { concurrencyKey: string | null; qPriority: number; claimKey: number };

/** How many candidates past the free slots a queued claim reads, so runs skipped for their key do not starve the rest. */
const CANDIDATE_SLACK = 32;

/** Writes the queue columns of runs just inserted, in one statement. */
export async function setFlows(tx: Tx, flows: readonly (readonly [runId: string, flow: RunFlow])[]): Promise<void> {
  if (flows.length === 0) return;
  await tx.query(SET_FLOWS, [flows.map(([id]) => id), flows.map(([, f]) => f.queue), flows.map(([, f]) => f.concurrencyKey), flows.map(([, f]) => f.priority)]);
}

/**
 * The queued runs a claim may take, at most `max`, queue by queue in the request's order, locked;
 * first starts are stamped (`started_at`) for the rate limit. Call inside the claim's transaction.
 */
export async function pickQueuedRuns(tx: Tx, request: ClaimRequest, max: number): Promise<StateRow[]> {
  const out: StateRow[] = [];
  for (const limits of request.queues ?? []) {
    if (out.length >= max) break;
    out.push(...(await pickQueue(tx, request, limits, max - out.length)));
  }
  const started = out.filter((row) => isStart(row)).map((row) => row.runId);
  if (started.length > 0) await tx.query(MARK_STARTED, [started, request.now]);
  return out;
}

async function pickQueue(tx: Tx, request: ClaimRequest, limits: QueueLimits, max: number): Promise<StateRow[]> {
  await tx.query(LOCK_QUEUE, [limits.name]);
  const count = async (statement: Sql, values: unknown[]) => (await tx.query<{ n: number }>(statement, values))[0]?.n ?? 0;
  const running = limits.concurrency === null ? 0 : await count(COUNT_RUNNING, [limits.name]);
  const started = limits.rateLimit === null ? 0 : await count(COUNT_STARTED, [limits.name, request.now - limits.rateLimit.perMs]);
  const allowance = queueAllowance(limits, running, started);
  const room = Math.min(allowance.slots, max);
  if (room <= 0) return [];
  const names = request.workflows.map((w) => w.name);
  const versions = request.workflows.map((w) => w.version);
  const candidates = await tx.query<Candidate>(CANDIDATES, [names, versions, room + CANDIDATE_SLACK, request.now, limits.name, limits.perKeyConcurrency]);
  if (candidates.length === 0) return [];
  const byKey = new Map<string, number>();
  const keys = [...new Set(candidates.flatMap((c) => (c.concurrencyKey === null ? [] : [c.concurrencyKey])))];
  if (limits.perKeyConcurrency !== null && keys.length > 0) {
    for (const row of await tx.query<{ k: string; n: number }>(RUNNING_BY_KEY, [limits.name, keys])) byKey.set(row.k, row.n);
  }
  return pickQueued(candidates, limits, allowance, byKey, room).map(({ concurrencyKey: _k, qPriority: _p, claimKey: _c, ...row }) => row);
}

/** See `Store.debounceRun`; call inside a transaction whose time is `now`. */
export async function debounceRun(tx: Tx, run: NewRun, key: string, startAt: number, now: number): Promise<{ run: RunRecord; created: boolean }> {
  await tx.query(LOCK_DEBOUNCE, [run.workflow, key]);
  const [row] = await tx.query<StateRow & { input: string }>(FIND_DEBOUNCED, [run.workflow, key]);
  if (row) {
    const next = rebounce(toRun(row), run.input, startAt, now);
    await tx.query(REBOUNCE, [next.run.runId, next.run.input, next.run.wakeAt, next.run.lastSeq, now]);
    await tx.query(INSERT_ENTRIES, entryArrays([next.entry]));
    tx.journaled([next.run.runId]);
    return { run: next.run, created: false };
  }
  const { record, entries } = newDebouncedRun(run, startAt, now);
  await tx.query(INSERT_RUN, runValues(record));
  await tx.query(SET_DEBOUNCE, [run.runId, key, run.flow?.queue ?? null, run.flow?.concurrencyKey ?? null, run.flow?.priority ?? 0]);
  await tx.query(INSERT_ENTRIES, entryArrays(entries));
  tx.journaled([run.runId]);
  return { run: record, created: true };
}

/** See `Store.queueStats`. */
export async function queueStats(tx: Tx, now: number): Promise<QueueStat[]> {
  return tx.query<QueueStat & Record<string, unknown>>(QUEUE_STATS, [now]);
}
