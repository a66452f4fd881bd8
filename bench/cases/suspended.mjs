// Suspended-run cost: a worker process's memory (RSS and V8 heap after garbage collection, with
// --expose-gc) when the store holds no runs, and when it holds `runs` suspended runs waiting for an
// event. The suspended runs are made in bulk: one real bench-wake run is started and left suspended
// by a worker, then its rows (runs and journal) are copied `runs - 1` times under new run ids in one
// SQL statement each. Each measurement is a fresh worker process (default poll interval) measured
// after `settleMs` of idle polling. Then the last of them runs `selfRuns` more runs into suspension
// itself and is measured again (what suspended runs leave behind in a worker that handled them), and
// a worker in this process wakes a few of the bulk runs, timing sendEvent → step with all of them there.
import { createEngine, silentLogger } from "../../dist/src/index.js";
import { connectPg } from "../lib/pg.mjs";
import { spawnWorkers, stopWorkers } from "../lib/processes.mjs";
import { rootRequire } from "../lib/root-deps.mjs";
import { fmt, median, quantile } from "../lib/stats.mjs";
import { hooks, wakeOnEvent, workflows } from "../workflows.mjs";

const TIMEOUT_MS = 120_000;
const MB = 1024 * 1024;

export async function suspendedCase(target, { runs, reps, settleMs, selfRuns, wakeSamples, onProgress }) {
  const url = target.url;
  const engine = await createEngine({ store: url, workflows, logger: silentLogger });
  const samples = { emptyRssMB: [], emptyHeapMB: [], fullRssMB: [], fullHeapMB: [], deltaRssMB: [], deltaHeapMB: [], emptyClaimP50Ms: [], fullClaimP50Ms: [] };
  const result = { runs, samples };
  try {
    for (let rep = 1; rep <= reps; rep++) {
      onProgress(`rep ${rep}/${reps}: worker with an empty store`);
      const { memory } = await measureWorker(url, settleMs);
      samples.emptyRssMB.push(memory.rss / MB);
      samples.emptyHeapMB.push(memory.heapUsed / MB);
      samples.emptyClaimP50Ms.push(quantile(memory.claims, 0.5));
    }

    onProgress(`creating ${fmt(runs, 0)} suspended runs in bulk`);
    const t0 = performance.now();
    const worker = engine.startWorker({ concurrency: 1, pollInterval: 5 });
    await engine.start(wakeOnEvent, {}, { runId: "template" });
    await waitStatus(engine, ["template"], "suspended");
    await worker.stop({ drain: true });
    await cloneRun(target, "template", "sus-", runs - 1);
    const check = await engine.getRun(`sus-${runs - 1}`);
    if (check.status !== "suspended" || check.waitingFor[0]?.kind !== "event") throw new Error(`the bulk-made run sus-${runs - 1} is ${check.status}, not suspended on an event`);
    result.bulkCreateMs = performance.now() - t0;

    let last = null;
    for (let rep = 1; rep <= reps; rep++) {
      onProgress(`rep ${rep}/${reps}: worker with ${fmt(runs, 0)} suspended runs in the store`);
      const keep = rep === reps;
      const measured = await measureWorker(url, settleMs, { keep });
      const { memory } = measured;
      samples.fullRssMB.push(memory.rss / MB);
      samples.fullHeapMB.push(memory.heapUsed / MB);
      samples.fullClaimP50Ms.push(quantile(memory.claims, 0.5));
      samples.deltaRssMB.push(samples.fullRssMB.at(-1) - samples.emptyRssMB[rep - 1]);
      samples.deltaHeapMB.push(samples.fullHeapMB.at(-1) - samples.emptyHeapMB[rep - 1]);
      if (keep) last = measured;
    }

    // The last worker suspends `selfRuns` runs itself, in two halves, measured after each: the first
    // half also warms the worker up (code, statement caches, pools), the second shows what each further
    // suspended run leaves behind.
    try {
      const half = Math.floor(selfRuns / 2);
      const halves = [];
      for (const part of [0, 1]) {
        onProgress(`the worker runs ${fmt(half, 0)} more runs into suspension (${part + 1}/2)`);
        const ids = Array.from({ length: half }, (_, i) => `self-${part}-${i}`);
        for (let i = 0; i < ids.length; i += 500) await Promise.all(ids.slice(i, i + 500).map((runId) => engine.start(wakeOnEvent, {}, { runId })));
        await waitStatus(engine, ids, "suspended");
        await new Promise((resolve) => setTimeout(resolve, settleMs));
        halves.push(await askMemory(last.child));
      }
      const [a, b] = halves;
      result.selfSuspended = {
        runs: 2 * half,
        rssMB: b.rss / MB,
        heapMB: b.heapUsed / MB,
        rssDeltaMB: (b.rss - last.memory.rss) / MB,
        heapDeltaMB: (b.heapUsed - last.memory.heapUsed) / MB,
        secondHalfHeapBytesPerRun: (b.heapUsed - a.heapUsed) / half,
        secondHalfRssBytesPerRun: (b.rss - a.rss) / half,
      };
    } finally {
      await stopWorkers([last.child]);
    }

    // Waking one of them: an in-process worker, sendEvent → step entered, with all of them in the store.
    onProgress(`waking ${wakeSamples} of the suspended runs`);
    const wake = await wakeSome(engine, runs, wakeSamples);
    result.wakeWithAll = { samples: wake.length, p50Ms: quantile(wake, 0.5), maxMs: Math.max(...wake) };
    result.suspendedAtEnd = runs - wakeSamples + result.selfSuspended.runs;
  } finally {
    await engine.close();
  }
  result.medianDeltaRssMB = median(samples.deltaRssMB);
  return result;
}

/** A fresh worker process: waits `settleMs`, then asks for its memory after GC. { memory, child? } */
async function measureWorker(url, settleMs, { keep = false } = {}) {
  const [child] = await spawnWorkers(url, 1, 32, { env: { BENCH_POLL_INTERVAL: "default" }, nodeArgs: ["--expose-gc"] });
  try {
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    const memory = await askMemory(child);
    if (!memory.gc) throw new Error("the worker process has no gc(): --expose-gc was not passed");
    return keep ? { memory, child } : { memory };
  } finally {
    if (!keep) await stopWorkers([child]);
  }
}

function askMemory(child) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker ${child.pid} did not report its memory`)), 30_000);
    const onLine = (line) => {
      if (!line.startsWith("memory ")) return;
      clearTimeout(timer);
      child.lines.off("line", onLine);
      resolve(JSON.parse(line.slice("memory ".length)));
    };
    child.lines.on("line", onLine);
    child.stdin.write("memory\n");
  });
}

async function waitStatus(engine, ids, status) {
  const deadline = Date.now() + TIMEOUT_MS;
  const pending = new Set(ids);
  while (pending.size > 0) {
    for (const runId of [...pending]) if ((await engine.getRun(runId)).status === status) pending.delete(runId);
    if (pending.size === 0) break;
    if (Date.now() > deadline) throw new Error(`${pending.size} of ${ids.length} runs were not ${status} after ${TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Copies the run `from` (its runs row and journal rows) `count` times as `${prefix}1` … `${prefix}count`,
 * in one transaction. Column lists are read from the schema, so added columns are copied too.
 */
async function cloneRun(target, from, prefix, count) {
  if (target.file) {
    const Database = rootRequire("better-sqlite3");
    const db = new Database(target.file, { timeout: 10_000 });
    try {
      db.pragma("busy_timeout = 10000");
      const copy = (table) => {
        const columns = db.prepare(`PRAGMA table_info(${table})`).all().map((c) => c.name);
        const select = columns.map((c) => (c === "run_id" ? `'${prefix}' || n.i` : `t.${c}`)).join(", ");
        db.prepare(
          `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
           INSERT INTO ${table} (${columns.join(", ")}) SELECT ${select} FROM ${table} AS t, n WHERE t.run_id = ?`,
        ).run(from);
      };
      db.transaction(() => {
        copy("runs");
        copy("journal");
      }).immediate();
    } finally {
      db.close();
    }
    return;
  }
  const client = await connectPg(target.url);
  try {
    await client.query(`SET search_path TO "${target.schema}"`);
    const copy = async (table) => {
      const { rows } = await client.query(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND is_identity = 'NO' AND is_generated = 'NEVER' ORDER BY ordinal_position`,
        [target.schema, table],
      );
      const columns = rows.map((r) => r.column_name);
      const select = columns.map((c) => (c === "run_id" ? `$1 || n.i` : `t.${c}`)).join(", ");
      await client.query(`INSERT INTO ${table} (${columns.join(", ")}) SELECT ${select} FROM ${table} AS t, generate_series(1, $2::int) AS n(i) WHERE t.run_id = $3`, [prefix, count, from]);
    };
    await client.query("BEGIN");
    await copy("runs");
    await copy("journal");
    await client.query("COMMIT");
    // What autovacuum would do soon after a bulk load: fresh planner statistics.
    await client.query("ANALYZE runs; ANALYZE journal");
  } finally {
    await client.end();
  }
}

/** Wakes `n` of the bulk-made runs (spread over the ids) with an in-process worker; latencies in ms. */
async function wakeSome(engine, runs, n) {
  const entered = new Map();
  const previous = hooks.stepEntered;
  hooks.stepEntered = (runId) => entered.get(runId)?.(performance.now());
  const worker = engine.startWorker({ concurrency: 32 });
  const latencies = [];
  try {
    for (let k = 0; k < n; k++) {
      const runId = `sus-${1 + Math.floor(((runs - 2) * (k + 0.5)) / n)}`;
      const step = new Promise((resolve, reject) => {
        entered.set(runId, resolve);
        setTimeout(() => reject(new Error(`${runId}: no step within 30 s of its event`)), 30_000).unref();
      });
      const sent = performance.now();
      await engine.sendEvent(runId, "go", null);
      latencies.push((await step) - sent);
      await engine.result(runId, { timeoutMs: 30_000 });
    }
  } finally {
    hooks.stepEntered = previous;
    await worker.stop({ drain: true });
  }
  return latencies;
}
