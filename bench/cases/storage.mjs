// Storage: bytes the store keeps per journaled step beyond the step's own result. One store, measured
// after each of three phases, compacted each time (SQLite: WAL checkpoint and VACUUM, then page_count ×
// page_size, and dbstat's bytes per table when the build has it; PostgreSQL: VACUUM FULL of the store's
// tables, then pg_total_relation_size, which counts heap, indexes and TOAST):
//   A: `runs` runs of 0 steps (so every table and index has its first pages);  B: `runs` more runs of
//   0 steps;  C: `runs` more runs of `steps` steps each returning STORAGE_RESULT.
// Per run = (B - A) / runs; per step = (C - B - per run × runs) / (runs × steps), so the run's own rows
// (run row, created/claimed/completed entries) do not count against the steps. Run ids are the
// engine's default (random UUIDs), as an application that names no ids gets.
import { createEngine, encode, silentLogger } from "../../dist/src/index.js";
import { connectPg } from "../lib/pg.mjs";
import { rootRequire } from "../lib/root-deps.mjs";
import { STORAGE_RESULT, storageSteps, workflows } from "../workflows.mjs";

export async function storageCase(target, { runs, steps, onProgress }) {
  const measure = target.file ? () => sqliteSizes(target.file) : () => pgSizes(target);
  const phase = async (stepsPerRun) => {
    const engine = await createEngine({ store: target.url, workflows, logger: silentLogger });
    try {
      engine.startWorker({ concurrency: runs, pollInterval: 5 });
      // Default run ids (random UUIDs, 36 characters), as an application that names no ids gets.
      const handles = await Promise.all(Array.from({ length: runs }, () => engine.start(storageSteps, { steps: stepsPerRun })));
      for (const handle of handles) {
        const out = await handle.result({ timeoutMs: 300_000 });
        if (out !== stepsPerRun) throw new Error(`${handle.runId} returned ${JSON.stringify(out)}`);
      }
    } finally {
      await engine.close();
    }
  };
  onProgress(`A: ${runs} runs of 0 steps`);
  await phase(0);
  const sizeA = await measure();
  onProgress(`B: ${runs} more runs of 0 steps`);
  await phase(0);
  const sizeB = await measure();
  onProgress(`C: ${runs} runs of ${steps} steps`);
  await phase(steps);
  const sizeC = await measure();
  const totalSteps = runs * steps;
  const payloadBytes = Buffer.byteLength(encode(STORAGE_RESULT));
  const perRun = (sizeB.total - sizeA.total) / runs;
  const perStep = (sizeC.total - sizeB.total - perRun * runs) / totalSteps;
  const journalPerRun = (sizeB.journal - sizeA.journal) / runs;
  const journalPerStep = (sizeC.journal - sizeB.journal - journalPerRun * runs) / totalSteps;
  const rowsPerStep = (sizeC.journalRows - sizeB.journalRows - (sizeB.journalRows - sizeA.journalRows)) / totalSteps;
  return {
    runs,
    steps,
    payloadBytes,
    rowsPerStep,
    perRunBytes: perRun,
    perStepBytes: perStep,
    overheadPerStepBytes: perStep - payloadBytes,
    journalPerStepBytes: journalPerStep,
    journalOverheadPerStepBytes: journalPerStep - payloadBytes,
    sizes: [sizeA, sizeB, sizeC],
    samples: {},
  };
}

/** { total, journal, journalRows, byObject } of a compacted SQLite file. */
function sqliteSizes(file) {
  const Database = rootRequire("better-sqlite3");
  const db = new Database(file, { timeout: 10_000 });
  try {
    db.pragma("wal_checkpoint(TRUNCATE)");
    db.exec("VACUUM");
    db.pragma("wal_checkpoint(TRUNCATE)");
    const total = db.pragma("page_count", { simple: true }) * db.pragma("page_size", { simple: true });
    let byObject = null;
    let journal = null;
    try {
      byObject = Object.fromEntries(db.prepare("SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name").all().map((r) => [r.name, r.bytes]));
      const journalObjects = db.prepare("SELECT name FROM sqlite_schema WHERE tbl_name = 'journal'").pluck().all();
      journal = journalObjects.reduce((sum, name) => sum + (byObject[name] ?? 0), 0);
    } catch {
      // this SQLite build has no dbstat: only the file total
    }
    const journalRows = db.prepare("SELECT COUNT(*) FROM journal").pluck().get();
    return { total, journal, journalRows, byObject };
  } finally {
    db.close();
  }
}

/** { total, journal, journalRows, byObject } of the store's schema after VACUUM FULL. */
async function pgSizes(target) {
  const client = await connectPg(target.url);
  try {
    const schema = target.schema;
    const { rows: tables } = await client.query(`SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, [schema]);
    for (const { relname } of tables) await client.query(`VACUUM FULL "${schema}"."${relname}"`);
    const byObject = {};
    for (const { relname } of tables) {
      const { rows } = await client.query(`SELECT pg_total_relation_size($1::regclass)::bigint AS bytes`, [`"${schema}"."${relname}"`]);
      byObject[relname] = Number(rows[0].bytes);
    }
    const total = Object.values(byObject).reduce((a, b) => a + b, 0);
    const { rows } = await client.query(`SELECT COUNT(*)::bigint AS n FROM "${schema}".journal`);
    return { total, journal: byObject.journal, journalRows: Number(rows[0].n), byObject };
  } finally {
    await client.end();
  }
}
