import type { Sql } from "./postgres-queries.js";
import { ENTRY_COLUMNS } from "./postgres-rows.js";

/** Statements of the safe-deploys feature (versions, drains, dead-letter); none runs on the step-commit path. */
const sql = (name: string, text: string): Sql => ({ name: `cairn_${name}`, text });

/** Runs per (workflow, version, status). */
export const COUNT_VERSIONS = sql(
  "count_versions",
  `SELECT workflow, version, status, count(*)::int AS count FROM runs
   GROUP BY workflow, version, status ORDER BY workflow COLLATE "C", version COLLATE "C", status COLLATE "C"`,
);

export const DRAIN_VERSION = sql(
  "drain_version",
  "INSERT INTO drained_versions (workflow, version, drained_at) VALUES ($1, $2, $3) ON CONFLICT (workflow, version) DO NOTHING",
);

export const UNDRAIN_VERSION = sql("undrain_version", "DELETE FROM drained_versions WHERE workflow = $1 AND version = $2");

export const LIST_DRAINED = sql(
  "list_drained",
  `SELECT workflow, version, drained_at AS "drainedAt" FROM drained_versions ORDER BY workflow COLLATE "C", version COLLATE "C"`,
);

/** The entries of a run's latest attempt: from its newest `run.claimed` on (recovery path only). */
export const LATEST_ATTEMPT = sql(
  "latest_attempt",
  `SELECT ${ENTRY_COLUMNS} FROM journal WHERE run_id = $1
     AND seq >= COALESCE((SELECT max(seq) FROM journal WHERE run_id = $1 AND kind = 'run.claimed'), 0) ORDER BY seq`,
);

export const GET_RECOVERY_FAILURES = sql("get_recovery_failures", `SELECT recovery_failures AS n FROM runs WHERE run_id = $1`);

export const SET_RECOVERY_FAILURES = sql("set_recovery_failures", "UPDATE runs SET recovery_failures = $2 WHERE run_id = $1");
