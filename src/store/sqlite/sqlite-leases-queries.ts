import { TERMINAL_STATUSES_SQL } from "../../core/run.js";
import type { ClaimRequest } from "../../core/store.js";
import { ENTRY_COLUMNS, STATE_COLUMNS } from "./sqlite-rows.js";

// The statements of claims and leases for the SQLite store (see sqlite-leases.ts).

export const RENEW_LEASE = `UPDATE runs SET lease_expires_at = ?
       WHERE run_id = ? AND lease_epoch = ? AND lease_owner = ? AND status NOT IN ${TERMINAL_STATUSES_SQL}`;

/**
 * The entries of a run's latest attempt: from its newest `run.claimed` on (found through
 * journal_claims_idx), at most @limit of them (-1: all). Recovery path only.
 */
export const LATEST_ATTEMPT = `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = @id
           AND seq >= COALESCE((SELECT MAX(seq) FROM journal WHERE run_id = @id AND kind = 'run.claimed'), 0) ORDER BY seq LIMIT @limit`;
export const GET_RECOVERY_FAILURES = "SELECT recovery_failures AS n FROM runs WHERE run_id = ?";
export const SET_RECOVERY_FAILURES = "UPDATE runs SET recovery_failures = ? WHERE run_id = ?";

/**
 * The claim query for `pairs` (workflow, version) pairs; bind it with {@link claimParams}.
 * Queued runs (flow control) are left to `SqliteFlow`, except expired leases, which keep their slot.
 * Each kind of runnable run is read from its own index, already in claim order or
 * (expired leases, rare) from a narrow range, so a claim touches about `limit` rows
 * per kind however many runs are waiting or held.
 */
export function claimQuery(pairs: number): string {
  const versions = Array.from({ length: pairs }, () => "(workflow = ? AND version = ?)").join(" OR ");
  const part = (key: string, where: string, order: string) =>
    `SELECT * FROM (SELECT ${STATE_COLUMNS}, ${key} AS claimKey FROM runs WHERE ${where} AND (${versions}) ORDER BY ${order}, run_id LIMIT ?)`;
  // "+created_at" keeps the planner on the lease index instead of scanning every held run in creation order.
  return `SELECT * FROM (
           ${part("created_at", "status = 'pending' AND queue IS NULL", "created_at")}
           UNION ALL ${part("wake_at", "status = 'suspended' AND queue IS NULL AND wake_at <= ?", "wake_at")}
           UNION ALL ${part("created_at", "status = 'running' AND lease_expires_at <= ?", "+created_at")}
           UNION ALL ${part("created_at", "status = 'running' AND lease_expires_at IS NULL", "+created_at")}
         ) ORDER BY claimKey, runId LIMIT ?`;
}

/**
 * Whether {@link claimQuery} would find anything: one EXISTS per kind of runnable run, each a probe
 * of the same index, without the sorts that make the claim query cost a few hundred microseconds even
 * when it finds nothing (an idle worker's poll, a worker looking for more work as each run ends).
 * Bind it with {@link claimProbeParams}; returns one row, `found` 0 or 1.
 */
export function claimProbeQuery(pairs: number): string {
  const versions = Array.from({ length: pairs }, () => "(workflow = ? AND version = ?)").join(" OR ");
  const kind = (where: string) => `EXISTS (SELECT 1 FROM runs WHERE ${where} AND (${versions}))`;
  return `SELECT ${kind("status = 'pending' AND queue IS NULL")}
           OR ${kind("status = 'suspended' AND queue IS NULL AND wake_at <= ?")}
           OR ${kind("status = 'running' AND lease_expires_at <= ?")}
           OR ${kind("status = 'running' AND lease_expires_at IS NULL")} AS found`;
}

/** Parameters for {@link claimProbeQuery}, in placeholder order. */
export function claimProbeParams(request: ClaimRequest): unknown[] {
  const pairs = request.workflows.flatMap((w) => [w.name, w.version]);
  return [...pairs, request.now, ...pairs, request.now, ...pairs, ...pairs];
}

/** Parameters for {@link claimQuery}, in placeholder order. */
export function claimParams(request: ClaimRequest): unknown[] {
  const pairs = request.workflows.flatMap((w) => [w.name, w.version]);
  return [...pairs, request.limit, request.now, ...pairs, request.limit, request.now, ...pairs, request.limit, ...pairs, request.limit, request.limit];
}
