import { TERMINAL_STATUSES_SQL } from "../../core/run.js";
import { ENTRY_COLUMNS, STATE_COLUMNS } from "./postgres-rows.js";
import { nowParam, sql } from "./postgres-queries.js";

// The statements of claims and leases for the PostgreSQL store (see postgres-leases.ts).

const TERMINAL = TERMINAL_STATUSES_SQL;

/**
 * Claim candidates, locked: each kind of runnable run is read from its own index and locked
 * with SKIP LOCKED (rows another claimer holds are passed over, not waited for), then the oldest
 * wake-ups across kinds win. Rows come from the locking scans, so they are the latest committed
 * versions, never a stale snapshot. "created_at + 0" keeps the planner off the status index for
 * expired and released leases, which would walk every held run in creation order; the lease
 * index finds the few expired ones directly. Pending and due runs of a queue are left to the
 * queued claim (postgres-flow.ts); their partial indexes hold only unqueued runs.
 * $1/$2 workflow names/versions, $3 limit, $4 now.
 */
export const CLAIM_CANDIDATES = sql(
  "claim_candidates",
  `WITH wanted AS (SELECT w, v FROM unnest($1::text[], $2::text[]) AS t(w, v)),
   pending AS (
     SELECT ${STATE_COLUMNS}, created_at AS claim_key FROM runs
     WHERE status = 'pending' AND queue IS NULL AND (workflow, version) IN (SELECT w, v FROM wanted)
     ORDER BY created_at, run_id LIMIT $3 FOR UPDATE OF runs SKIP LOCKED),
   due AS (
     SELECT ${STATE_COLUMNS}, wake_at AS claim_key FROM runs
     WHERE status = 'suspended' AND wake_at IS NOT NULL AND queue IS NULL AND wake_at <= $4 AND (workflow, version) IN (SELECT w, v FROM wanted)
     ORDER BY wake_at, run_id LIMIT $3 FOR UPDATE OF runs SKIP LOCKED),
   expired AS (
     SELECT ${STATE_COLUMNS}, created_at AS claim_key FROM runs
     WHERE status = 'running' AND lease_expires_at <= $4 AND (workflow, version) IN (SELECT w, v FROM wanted)
     ORDER BY created_at + 0, run_id LIMIT $3 FOR UPDATE OF runs SKIP LOCKED),
   released AS (
     SELECT ${STATE_COLUMNS}, created_at AS claim_key FROM runs
     WHERE status = 'running' AND lease_expires_at IS NULL AND (workflow, version) IN (SELECT w, v FROM wanted)
     ORDER BY created_at + 0, run_id LIMIT $3 FOR UPDATE OF runs SKIP LOCKED)
   SELECT * FROM (SELECT * FROM pending UNION ALL SELECT * FROM due UNION ALL SELECT * FROM expired UNION ALL SELECT * FROM released) AS c
   ORDER BY claim_key, "runId" LIMIT $3`,
);

/**
 * Whether a claim could find anything: one EXISTS per kind of runnable run in {@link CLAIM_CANDIDATES},
 * each a probe of the same index, as one read outside any transaction and without locks (so it may
 * name a run another claimer is taking). $1/$2 workflow names/versions, $3 the time (NULL: the
 * database clock). A worker whose claim finds nothing (the common case after a run ends) pays one
 * round trip instead of a transaction's three. Returns one row, `found`.
 */
export const CLAIM_PROBE = sql(
  "claim_probe",
  `WITH wanted AS (SELECT w, v FROM unnest($1::text[], $2::text[]) AS t(w, v))
   SELECT EXISTS (SELECT 1 FROM runs WHERE status = 'pending' AND queue IS NULL AND (workflow, version) IN (SELECT w, v FROM wanted))
     OR EXISTS (SELECT 1 FROM runs WHERE status = 'suspended' AND wake_at IS NOT NULL AND queue IS NULL AND wake_at <= ${nowParam(3)}
       AND (workflow, version) IN (SELECT w, v FROM wanted))
     OR EXISTS (SELECT 1 FROM runs WHERE status = 'running' AND lease_expires_at <= ${nowParam(3)} AND (workflow, version) IN (SELECT w, v FROM wanted))
     OR EXISTS (SELECT 1 FROM runs WHERE status = 'running' AND lease_expires_at IS NULL AND (workflow, version) IN (SELECT w, v FROM wanted))
     AS found`,
);

/** $1 worker, $2 run ids, $3 epochs, $4 now (NULL: database clock), $5 lease ms. Returns the renewed (runId, epoch) pairs. */
export const RENEW_LEASES = sql(
  "renew_leases",
  `UPDATE runs AS r SET lease_expires_at = ${nowParam(4)} + $5::bigint
   FROM unnest($2::text[], $3::bigint[]) AS l(run_id, epoch)
   WHERE r.run_id = l.run_id AND r.lease_epoch = l.epoch AND r.lease_owner = $1 AND r.status NOT IN ${TERMINAL}
   RETURNING r.run_id AS "runId", r.lease_epoch AS "leaseEpoch"`,
);

/**
 * The entries of a run's latest attempt: from its newest `run.claimed` on (found through
 * journal_claims_idx), at most $2 of them (NULL: all). Recovery path only.
 */
export const LATEST_ATTEMPT = sql(
  "latest_attempt",
  `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = $1
     AND seq >= COALESCE((SELECT max(seq) FROM journal WHERE run_id = $1 AND kind = 'run.claimed'), 0) ORDER BY seq LIMIT $2`,
);

export const GET_RECOVERY_FAILURES = sql("get_recovery_failures", `SELECT recovery_failures AS n FROM runs WHERE run_id = $1`);

export const SET_RECOVERY_FAILURES = sql("set_recovery_failures", "UPDATE runs SET recovery_failures = $2 WHERE run_id = $1");
