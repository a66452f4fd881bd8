import type { LiveDeltaKind, LiveDeltaRecord } from "../../core/live-delta-store.js";

/** SQL of the live-delta tables shared by the SQLite and PostgreSQL stores (see `core/live-delta-store.ts`); `p(n)` is the n-th placeholder. */
export function liveDeltaSql(p: (n: number) => string) {
  return {
    streamed: `SELECT DISTINCT run_id AS "runId" FROM live_listeners WHERE origin <> ${p(1)} AND expires_at > ${p(2)}`,
    deleteStep: `DELETE FROM live_deltas WHERE run_id = ${p(1)} AND op_key = ${p(2)}`,
    insert: `INSERT INTO live_deltas (run_id, op_key, attempt, kind, origin, pieces, at) VALUES (${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)})`,
    // Groups (run, op key) whose newest record is older than the cut-off: abandoned or ended long ago.
    prune: `DELETE FROM live_deltas WHERE at < ${p(1)} AND NOT EXISTS (
      SELECT 1 FROM live_deltas newer WHERE newer.run_id = live_deltas.run_id AND newer.op_key = live_deltas.op_key AND newer.at >= ${p(1)})`,
    pruneListeners: `DELETE FROM live_listeners WHERE expires_at < ${p(1)}`,
  };
}

/** A `live_deltas` row as read. */
export interface LiveDeltaRow {
  id: number | string;
  runId: string;
  opKey: string;
  attempt: number;
  kind: string;
  origin: string;
  pieces: string;
  at: number | string;
}

/** The columns of a read, aliased to {@link LiveDeltaRow}. */
export const LIVE_DELTA_COLUMNS = `id, run_id AS "runId", op_key AS "opKey", attempt, kind, origin, pieces, at`;

/** A row as a record. */
export function liveDeltaRecord(row: LiveDeltaRow): LiveDeltaRecord {
  return {
    id: Number(row.id),
    runId: row.runId,
    opKey: row.opKey,
    attempt: Number(row.attempt),
    kind: row.kind as LiveDeltaKind,
    origin: row.origin,
    pieces: JSON.parse(row.pieces) as unknown[],
    at: Number(row.at),
  };
}
