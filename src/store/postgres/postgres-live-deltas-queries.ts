import { LIVE_DELTA_COLUMNS, liveDeltaSql } from "../common/live-delta-sql.js";
import { sql } from "./postgres-queries.js";

// The statements of live deltas for the PostgreSQL store (see postgres-live-deltas.ts and `core/live-delta-store.ts`):
// two UNLOGGED tables and a NOTIFY on the live channel.

const shared = liveDeltaSql((i) => `$${i}`);

/** See `Store.advertiseLiveDeltas`. */
export const ADVERTISE_LIVE = sql(
  "advertise_live",
  `INSERT INTO live_listeners (origin, run_id, expires_at) SELECT $1, run_id, $3 FROM unnest($2::text[]) AS run_id
    ON CONFLICT (origin, run_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
);

/** See `Store.retireLiveDeltas`. */
export const RETIRE_LIVE = sql("retire_live", "DELETE FROM live_listeners WHERE origin = $1 AND ($2::text[] IS NULL OR run_id = ANY($2::text[]))");

/** See `Store.listStreamedRuns`. */
export const STREAMED_RUNS = sql("streamed_runs", shared.streamed);

/**
 * See `Store.writeLiveDeltas`: one statement (one round trip, committed by itself). The `end`
 * records' steps lose their earlier rows, then the records go in, in order, and readers are told.
 * A statement's parts see one snapshot, so the delete never touches the rows it inserts.
 */
export const WRITE_LIVE = sql(
  "write_live",
  `WITH ended AS (
      DELETE FROM live_deltas d USING unnest($1::text[], $2::text[]) AS e(run_id, op_key)
      WHERE d.run_id = e.run_id AND d.op_key = e.op_key
    ), inserted AS (
      INSERT INTO live_deltas (run_id, op_key, attempt, kind, origin, pieces, at)
      SELECT r, o, a, k, $8, p, $9 FROM unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::text[]) WITH ORDINALITY AS x(r, o, a, k, p, n) ORDER BY n
      RETURNING 1
    )
    SELECT pg_notify($10, '') FROM (SELECT count(*) FROM inserted) AS c`,
);

/** See `Store.readLiveDeltas`. */
export const READ_LIVE = sql(
  "read_live",
  `SELECT ${LIVE_DELTA_COLUMNS} FROM live_deltas WHERE id > $1 AND origin <> $2 AND run_id = ANY($3::text[]) ORDER BY id LIMIT $4`,
);

/** See `Store.pruneLiveDeltas`. */
export const PRUNE_LIVE = sql("prune_live", `${shared.prune} RETURNING 1`);
/** Expired advertisements, pruned with the records. */
export const PRUNE_LIVE_LISTENERS = sql("prune_live_listeners", shared.pruneListeners);
