// The statement of journal entries across runs for the PostgreSQL store (see postgres-run-entries.ts).

/** {@link Store.listRunEntries} in PostgreSQL: runs by their createdAt index, each run's entries by the journal's key. */
export const RUN_ENTRIES_SQL = `SELECT j.run_id AS "runId", j.seq, j.kind, j.op_key AS "opKey", j.payload, j.epoch, j.at,
    r.workflow, r.parent_run_id AS "parentRunId", r.created_at AS "createdAt"
  FROM runs r JOIN journal j ON j.run_id = r.run_id
  WHERE r.created_at >= $1 AND j.kind = $2 AND (r.created_at, r.run_id, j.seq) > ($1, $3, $4)
  ORDER BY r.created_at, r.run_id, j.seq LIMIT $5`;
