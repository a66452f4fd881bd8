// A short commit-ceiling probe taken right before each repetition of a Cairn case, so its ratio to
// the ceiling compares figures measured moments apart (fsync rates on shared disks drift).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { connectPg, withPgClient } from "./pg.mjs";
import { openRawSqlite, PAYLOAD } from "./raw-sqlite.mjs";

/** { measure(ms) → single-row commits/s, close() } for the store kind, or null for memory. */
export async function openProbe(kind, { tmpDir, pgUrl, name }) {
  if (kind === "sqlite") {
    const file = join(tmpDir, `${name}-probe.db`);
    const db = openRawSqlite(file, "probe");
    const insert = db.prepare("INSERT INTO probe (run_id, seq, payload) VALUES (?, ?, ?)");
    let seq = 0;
    return {
      async measure(ms) {
        const start = performance.now();
        const deadline = start + ms;
        let n = 0;
        while (performance.now() < deadline) {
          insert.run("run", seq++, PAYLOAD);
          n += 1;
        }
        return n / ((performance.now() - start) / 1000);
      },
      async close() {
        db.close();
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  if (kind === "postgres") {
    const schema = `${name}_probe`;
    const client = await connectPg(pgUrl);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE "${schema}".probe (id bigserial PRIMARY KEY, run_id text NOT NULL, seq integer NOT NULL, payload text NOT NULL)`);
    const text = `INSERT INTO "${schema}".probe (run_id, seq, payload) VALUES ($1, $2, $3)`;
    let seq = 0;
    return {
      async measure(ms) {
        const start = performance.now();
        const deadline = start + ms;
        let n = 0;
        while (performance.now() < deadline) {
          await client.query({ name: "probe-insert", text, values: ["run", seq++, PAYLOAD] });
          n += 1;
        }
        return n / ((performance.now() - start) / 1000);
      },
      async close() {
        await client.end();
        await withPgClient(pgUrl, (c) => c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
      },
    };
  }
  return null;
}
