import { isStart, pickQueued, queueAllowance, type QueueLimits, type QueueStat, type RunFlow } from "../../core/flow-control.js";
import type { RunRecord } from "../../core/run.js";
import type { ClaimRequest, NewRun } from "../../core/store.js";
import { newDebouncedRun, rebounce } from "../common/debounce.js";
import { INSERT_ENTRIES } from "./postgres-journal-queries.js";
import { INSERT_RUN } from "./postgres-runs-queries.js";
import { RUN_COLUMNS, STATE_COLUMNS, entryArrays, runValues, toRun, type StateRow } from "./postgres-rows.js";
import type { Tx } from "./postgres-tx.js";

type Candidate = StateRow & { concurrencyKey: string | null; qPriority: number; claimKey: number };

/** How many candidates past the free slots a queued claim reads, so runs skipped for their key do not starve the rest. */
const CANDIDATE_SLACK = 32;

const SET_FLOWS = {
  name: "cairn_set_flows",
  text: `UPDATE runs AS r SET queue = f.queue, concurrency_key = f.concurrency_key, priority = f.priority
         FROM unnest($1::text[], $2::text[], $3::text[], $4::int[]) AS f(run_id, queue, concurrency_key, priority)
         WHERE r.run_id = f.run_id`,
};

/**
 * Serialises the claimers of one queue with a transaction-scoped advisory lock keyed by the schema
 * and queue name: it is held until the claim commits, so the running count read after it includes
 * every claim committed before, and no other claimer can take a slot until this one commits.
 * (Two queue names hashing alike only serialise each other's claims more than needed.)
 */
const LOCK_QUEUE = {
  name: "cairn_lock_queue",
  text: "SELECT pg_advisory_xact_lock(hashtext('cairn.queue'), hashtext(current_schema() || '/' || $1))",
};

const COUNT_RUNNING = { name: "cairn_queue_running", text: "SELECT count(*)::int AS n FROM runs WHERE queue = $1 AND status = 'running'" };
const COUNT_STARTED = { name: "cairn_queue_started", text: "SELECT count(*)::int AS n FROM runs WHERE queue = $1 AND started_at > $2" };
const RUNNING_BY_KEY = {
  name: "cairn_queue_running_by_key",
  text: `SELECT concurrency_key AS k, count(*)::int AS n FROM runs
         WHERE queue = $1 AND status = 'running' AND concurrency_key = ANY($2::text[]) GROUP BY concurrency_key`,
};
const MARK_STARTED = { name: "cairn_queue_mark_started", text: "UPDATE runs SET started_at = $2 WHERE run_id = ANY($1::text[])" };

/**
 * Pending and due runs of one queue, locked with SKIP LOCKED, in claim order (priority desc, then
 * oldest wake-up), leaving out keys already at their limit ($6 NULL: no per-key limit).
 * $1/$2 workflow names/versions, $3 limit, $4 now, $5 queue.
 */
const CANDIDATES = {
  name: "cairn_queue_candidates",
  text: `WITH wanted AS (SELECT w, v FROM unnest($1::text[], $2::text[]) AS t(w, v)),
   full_keys AS (
     SELECT concurrency_key FROM runs WHERE $6::int IS NOT NULL AND queue = $5 AND status = 'running' AND concurrency_key IS NOT NULL
     GROUP BY concurrency_key HAVING count(*) >= $6::int),
   pending AS (
     SELECT ${STATE_COLUMNS}, concurrency_key AS "concurrencyKey", priority AS "qPriority", created_at AS "claimKey" FROM runs
     WHERE queue = $5 AND status = 'pending' AND (workflow, version) IN (SELECT w, v FROM wanted)
       AND (concurrency_key IS NULL OR concurrency_key NOT IN (SELECT concurrency_key FROM full_keys))
     ORDER BY priority DESC, created_at, run_id LIMIT $3 FOR UPDATE OF runs SKIP LOCKED),
   due AS (
     SELECT ${STATE_COLUMNS}, concurrency_key AS "concurrencyKey", priority AS "qPriority", wake_at AS "claimKey" FROM runs
     WHERE queue = $5 AND status = 'suspended' AND wake_at IS NOT NULL AND wake_at <= $4 AND (workflow, version) IN (SELECT w, v FROM wanted)
       AND (concurrency_key IS NULL OR concurrency_key NOT IN (SELECT concurrency_key FROM full_keys))
     ORDER BY priority DESC, wake_at, run_id LIMIT $3 FOR UPDATE OF runs SKIP LOCKED)
   SELECT * FROM (SELECT * FROM pending UNION ALL SELECT * FROM due) AS c ORDER BY "qPriority" DESC, "claimKey", "runId" LIMIT $3`,
};

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
  const count = async (statement: { name: string; text: string }, values: unknown[]) => (await tx.query<{ n: number }>(statement, values))[0]?.n ?? 0;
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

/**
 * Serialises debounced starts of one (workflow, key); the row lock of FOR UPDATE then keeps a claimer
 * (which locks with SKIP LOCKED) and this start apart: whichever locks the run first wins, and a
 * start that waited sees the claimed run's new epoch and creates a fresh run instead.
 */
const LOCK_DEBOUNCE = {
  name: "cairn_lock_debounce",
  text: "SELECT pg_advisory_xact_lock(hashtext('cairn.debounce'), hashtext(current_schema() || '/' || $1 || '/' || $2))",
};
const FIND_DEBOUNCED = {
  name: "cairn_find_debounced",
  text: `SELECT ${RUN_COLUMNS} FROM runs WHERE workflow = $1 AND debounce_key = $2 AND lease_epoch = 0 FOR UPDATE`,
};
const REBOUNCE = {
  name: "cairn_rebounce",
  text: "UPDATE runs SET input = $2, wake_at = $3, last_seq = $4, updated_at = $5 WHERE run_id = $1",
};
const SET_DEBOUNCE = {
  name: "cairn_set_debounce",
  text: "UPDATE runs SET debounce_key = $2, queue = $3, concurrency_key = $4, priority = $5 WHERE run_id = $1",
};

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

const QUEUE_STATS = {
  name: "cairn_queue_stats",
  text: `SELECT queue, concurrency_key AS "concurrencyKey",
     (count(*) FILTER (WHERE status = 'running'))::int AS running,
     (count(*) FILTER (WHERE status = 'pending' OR (status = 'suspended' AND wake_at <= $1)))::int AS waiting,
     (count(*) FILTER (WHERE status = 'suspended' AND (wake_at IS NULL OR wake_at > $1)))::int AS suspended
   FROM runs WHERE queue IS NOT NULL AND status IN ('pending', 'running', 'suspended')
   GROUP BY queue, concurrency_key ORDER BY queue, concurrency_key NULLS FIRST`,
};

/** See `Store.queueStats`. */
export async function queueStats(tx: Tx, now: number): Promise<QueueStat[]> {
  return tx.query<QueueStat & Record<string, unknown>>(QUEUE_STATS, [now]);
}
