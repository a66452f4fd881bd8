// The commit ceiling: how many single-row durable commits per second the storage itself allows,
// the physical floor under "one durable write per step".
import { connectPg, withPgClient } from "../lib/pg.mjs";
import { openRawSqlite, PAYLOAD } from "../lib/raw-sqlite.mjs";

/**
 * Single-row INSERT commits/s on a SQLite file opened with the store's pragmas
 * (src/store/sqlite/sqlite-open.ts: busy_timeout, WAL, synchronous=FULL, foreign_keys).
 * With `rowsPerTxn > 1`, rows/s in transactions of that many rows.
 */
export function sqliteCeiling(file, { durationMs, reps, rowsPerTxn = 1, onRep }) {
  const db = openRawSqlite(file, "ceiling");
  try {
    const insert = db.prepare("INSERT INTO ceiling (run_id, seq, payload) VALUES (?, ?, ?)");
    const many = db.transaction((base) => {
      for (let i = 0; i < rowsPerTxn; i++) insert.run("run", base + i, PAYLOAD);
    });
    const samples = [];
    let seq = 0;
    for (let rep = 0; rep <= reps; rep++) {
      // rep 0 is a short warm-up
      const deadline = performance.now() + (rep === 0 ? Math.min(200, durationMs) : durationMs);
      const start = performance.now();
      let rows = 0;
      while (performance.now() < deadline) {
        if (rowsPerTxn === 1) insert.run("run", seq++, PAYLOAD);
        else many((seq += rowsPerTxn));
        rows += rowsPerTxn;
      }
      const perSec = rows / ((performance.now() - start) / 1000);
      if (rep > 0) {
        samples.push(perSec);
        onRep?.(rep, perSec);
      }
    }
    return samples;
  } finally {
    db.close();
  }
}

/**
 * Autocommit single-row INSERTs/s into an ordinary (WAL-logged) table in a throwaway schema, over
 * `connections` connections at once. Not a TEMP table: PostgreSQL does not WAL-log temp tables, so
 * their commits skip the WAL flush and would overstate the ceiling.
 */
export async function pgCeiling(url, schema, { durationMs, reps, connections = 1, onRep }) {
  await withPgClient(url, async (client) => {
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE "${schema}".ceiling (id bigserial PRIMARY KEY, run_id text NOT NULL, seq integer NOT NULL, payload text NOT NULL)`);
  });
  const clients = await Promise.all(Array.from({ length: connections }, () => connectPg(url)));
  try {
    const text = `INSERT INTO "${schema}".ceiling (run_id, seq, payload) VALUES ($1, $2, $3)`;
    const samples = [];
    for (let rep = 0; rep <= reps; rep++) {
      const deadline = performance.now() + (rep === 0 ? Math.min(200, durationMs) : durationMs);
      const start = performance.now();
      const counts = await Promise.all(
        clients.map(async (client, c) => {
          let n = 0;
          while (performance.now() < deadline) {
            await client.query({ name: "ceiling-insert", text, values: [`run-${c}`, n, PAYLOAD] });
            n += 1;
          }
          return n;
        }),
      );
      const perSec = counts.reduce((a, b) => a + b, 0) / ((performance.now() - start) / 1000);
      if (rep > 0) {
        samples.push(perSec);
        onRep?.(rep, perSec);
      }
    }
    return samples;
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}
