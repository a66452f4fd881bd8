// Cairn's benchmark suite: `npm run bench [-- --quick] [-- --only sqlite|postgres|memory]`.
// Progress on stderr, a table on stdout, everything in bench/out/results.json.
// Each figure is the median of repeated runs; ratios compare figures measured in this same run.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { openStore } from "../dist/src/index.js";
import { pgCeiling, sqliteCeiling } from "./cases/ceiling.mjs";
import { overheadCase } from "./cases/overhead.mjs";
import { throughputCase } from "./cases/throughput.mjs";
import { describeMachine } from "./lib/machine.mjs";
import { withPgClient } from "./lib/pg.mjs";
import { Progress } from "./lib/progress.mjs";
import { fmt, median, summarize } from "./lib/stats.mjs";
import { openProbe } from "./lib/probe.mjs";
import { freshTarget } from "./lib/targets.mjs";
import { renderTables } from "./lib/report.mjs";

const STORES = ["memory", "sqlite", "postgres"];
const { values: args } = parseArgs({
  options: {
    quick: { type: "boolean", default: process.env.BENCH_QUICK === "1" },
    only: { type: "string", default: process.env.BENCH_ONLY ?? "" },
    reps: { type: "string", default: process.env.BENCH_REPS ?? "" },
    "pg-url": { type: "string", default: process.env.BENCH_PG_URL ?? process.env.CAIRN_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test" },
    out: { type: "string", default: fileURLToPath(new URL("./out/results.json", import.meta.url)) },
  },
});

const only = args.only ? args.only.split(",").map((s) => s.trim()) : STORES;
for (const name of only) {
  if (!STORES.includes(name)) {
    process.stderr.write(`--only: unknown store "${name}"; use ${STORES.join(", ")} (comma-separated)\n`);
    process.exit(2);
  }
}
const quick = args.quick;
const reps = args.reps ? Number(args.reps) : quick ? 2 : 5;
if (!Number.isInteger(reps) || reps < 1) {
  process.stderr.write(`--reps: expected a whole number ≥ 1, got "${args.reps}"\n`);
  process.exit(2);
}
const settings = {
  quick,
  reps,
  /** Length of one throughput repetition (runs per repetition are sized from a warm-up). */
  targetSec: quick ? 0.3 : 1.5,
  /** Length of one commit-ceiling repetition. */
  ceilingMs: quick ? 300 : 1000,
  /** Length of the single-row commit probe taken before each repetition of a Cairn case. */
  probeMs: quick ? 150 : 300,
  /** Steps in the per-step overhead run. */
  overheadSteps: quick ? 100 : 500,
  pgUrl: args["pg-url"],
};

const began = performance.now();
const loadAverageBefore = loadavg()[0];
const skipped = {};
let pgCeilingOnly = false;
if (only.includes("postgres")) {
  const { reason, connects } = await postgresUnavailable(settings.pgUrl);
  if (reason) {
    skipped.postgres = reason;
    pgCeilingOnly = connects;
    process.stderr.write(`postgres ${connects ? "Cairn cases (throughput, overhead)" : "cases"} skipped: ${reason}\n`);
    if (only.length === 1 && !connects) process.exit(1);
  }
}
const stores = only.filter((s) => !skipped[s] || (s === "postgres" && pgCeilingOnly));
const tmpDir = mkdtempSync(join(tmpdir(), "cairn-bench-"));
const cleanups = new Set();
process.on("SIGINT", async () => {
  process.stderr.write("\ninterrupted: cleaning up\n");
  for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  rmSync(tmpDir, { recursive: true, force: true });
  process.exit(130);
});
const cases = planCases(stores).filter((c) => !(c.store === "postgres" && pgCeilingOnly && c.group !== "ceiling"));
const machine = { ...(await describeMachine({ pgUrl: settings.pgUrl, wantPg: stores.includes("postgres") })), loadAverageBefore };
const progress = new Progress(cases.length);
const results = [];
for (const c of cases) {
  progress.begin(c.label);
  const target = freshTarget(c.store, { tmpDir, pgUrl: settings.pgUrl, name: c.id.replaceAll(/[^a-z0-9]+/gi, "-") });
  cleanups.add(target.cleanup);
  const t0 = performance.now();
  const loadAverage = loadavg()[0];
  let probe = null;
  try {
    if (c.group !== "ceiling") probe = await openProbe(c.store, { tmpDir, pgUrl: settings.pgUrl, name: target.schema ?? c.id.replaceAll(/[^a-z0-9]+/gi, "-") });
    if (probe) cleanups.add(probe.close);
    const raw = await c.run(target, (text) => progress.update(text), probe);
    const result = { ...c.describe, id: c.id, store: c.store, group: c.group, label: c.label, loadAverage, seconds: (performance.now() - t0) / 1000, ...digest(raw) };
    results.push(result);
    progress.end(c.headline(result));
  } catch (error) {
    results.push({ id: c.id, store: c.store, group: c.group, label: c.label, error: String(error?.stack ?? error) });
    progress.end(`FAILED: ${error?.message ?? error}`, "✗");
  } finally {
    if (probe) {
      cleanups.delete(probe.close);
      await probe.close().catch((error) => process.stderr.write(`closing the probe of ${c.id} failed: ${error.message}\n`));
    }
    await target.cleanup().catch((error) => process.stderr.write(`cleanup of ${c.id} failed: ${error.message}\n`));
    cleanups.delete(target.cleanup);
  }
}
rmSync(tmpDir, { recursive: true, force: true });

addRatios(results);
const report = {
  generatedAt: new Date().toISOString(),
  command: `node bench/run.mjs ${process.argv.slice(2).join(" ")}`.trim(),
  settings: { ...settings, pgUrl: settings.pgUrl.replace(/\/\/[^@/]*@/, "//…@") },
  machine,
  skipped,
  totalSeconds: (performance.now() - began) / 1000,
  results,
};
mkdirSync(join(args.out, ".."), { recursive: true });
writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(renderTables(report));
process.stderr.write(`\n${results.filter((r) => r.error).length} failed of ${results.length} cases in ${fmt(report.totalSeconds, 0)} s${Object.keys(skipped).length ? ` (skipped: ${Object.keys(skipped).join(", ")})` : ""}; JSON in ${args.out}\n`);
process.exit(results.some((r) => r.error) ? 1 : 0);

/** The cases to run, in order, for the chosen stores. */
function planCases(chosen) {
  const list = [];
  const { reps, targetSec, ceilingMs, overheadSteps, probeMs } = settings;
  const onRep = (update) => (rep, perSec) => update(`rep ${rep}/${reps}: ${fmt(perSec)}/s`);
  const ceilingHeadline = (unit) => (r) => `${fmt(r.metrics.perSec.median)} ${unit} (${fmt(r.metrics.perSec.min)}–${fmt(r.metrics.perSec.max)})`;
  const throughputHeadline = (r) =>
    `${fmt(r.metrics.stepsPerSec.median)} steps/s, ${fmt(r.metrics.workflowsPerSec.median)} workflows/s (steps/s ${fmt(r.metrics.stepsPerSec.min)}–${fmt(r.metrics.stepsPerSec.max)})`;
  const overheadHeadline = (r) => `p50 ${fmt(r.metrics.p50Ms.median, 3)} ms, p99 ${fmt(r.metrics.p99Ms.median, 3)} ms`;

  if (chosen.includes("sqlite")) {
    list.push({
      id: "sqlite.ceiling.single", store: "sqlite", group: "ceiling", label: "sqlite ceiling, 1-row commits",
      describe: { what: "single-row INSERT commits/s (WAL, synchronous=FULL)", unit: "commits/s" },
      headline: ceilingHeadline("commits/s"),
      run: async (t, update) => ({ samples: { perSec: sqliteCeiling(t.file, { durationMs: ceilingMs, reps, onRep: onRep(update) }) } }),
    });
    list.push({
      id: "sqlite.ceiling.batch100", store: "sqlite", group: "ceiling", label: "sqlite ceiling, 100-row txns",
      describe: { what: "rows/s in 100-row transactions (WAL, synchronous=FULL)", unit: "rows/s" },
      headline: ceilingHeadline("rows/s"),
      run: async (t, update) => ({ samples: { perSec: sqliteCeiling(t.file, { durationMs: ceilingMs, reps, rowsPerTxn: 100, onRep: onRep(update) }) } }),
    });
  }
  if (chosen.includes("postgres")) {
    for (const connections of [1, 32]) {
      list.push({
        id: `postgres.ceiling.conn${connections}`, store: "postgres", group: "ceiling", label: `postgres ceiling, ${connections} conn`,
        describe: { what: `single-row autocommit INSERTs/s, ${connections} connection${connections > 1 ? "s" : ""}`, unit: "commits/s", connections },
        headline: ceilingHeadline("commits/s"),
        run: async (t, update) => ({ samples: { perSec: await pgCeiling(settings.pgUrl, t.schema, { durationMs: ceilingMs, reps, connections, onRep: onRep(update) }) } }),
      });
    }
  }
  for (const store of chosen) {
    const layouts = [
      { concurrency: 1, processes: 0 },
      { concurrency: 32, processes: 0 },
      { concurrency: 256, processes: 0 },
      ...(store === "postgres" ? [1, 2, 4].map((processes) => ({ concurrency: 32, processes })) : []),
    ];
    for (const { concurrency, processes } of layouts) {
      const where = processes === 0 ? "in-process" : `${processes} worker process${processes > 1 ? "es" : ""}`;
      list.push({
        id: `${store}.throughput.c${concurrency}${processes ? `.p${processes}` : ""}`, store, group: "throughput",
        label: `${store} ${concurrency === 1 ? "sequential" : `c${concurrency}`} ${processes ? `${processes} proc` : "in-proc"}`,
        describe: { concurrency, processes, where },
        headline: throughputHeadline,
        run: (t, update, probe) => throughputCase(t.url, { concurrency, processes, reps, targetSec, probe, probeMs, onProgress: update }),
      });
    }
    list.push({
      id: `${store}.overhead`, store, group: "overhead", label: `${store} per-step overhead`,
      describe: { steps: overheadSteps },
      headline: overheadHeadline,
      run: (t, update, probe) => overheadCase(t.url, { steps: overheadSteps, reps, probe, probeMs, onProgress: update }),
    });
  }
  return list;
}

/** Raw case output → { metrics: {name: summary}, ...rest }. */
function digest(raw) {
  const { samples, storeCallsPerWorkflow, commitsPerStep, ...rest } = raw;
  const metrics = {};
  for (const [name, values] of Object.entries(samples)) if (values.length > 0) metrics[name] = summarize(values);
  const out = { ...rest, metrics };
  if (storeCallsPerWorkflow) out.storeCallsPerWorkflow = Object.fromEntries(Object.entries(storeCallsPerWorkflow).map(([k, v]) => [k, median(v)]));
  if (commitsPerStep) out.commitsPerStep = median(commitsPerStep);
  return out;
}

/**
 * Ratios to the commit ceiling cases of this run (JSON only; the table shows the ratio to the probe
 * taken before each repetition, which is less exposed to drifting fsync rates).
 */
function addRatios(all) {
  const ceiling = (id) => all.find((r) => r.id === id && !r.error)?.metrics.perSec.median;
  const single = { sqlite: ceiling("sqlite.ceiling.single"), postgres: ceiling("postgres.ceiling.conn1") };
  const conn32 = ceiling("postgres.ceiling.conn32");
  for (const r of all) {
    if (r.error || r.group !== "throughput") continue;
    if (single[r.store]) r.ratioToCeilingCase = r.metrics.stepsPerSec.median / single[r.store];
    if (r.store === "postgres" && r.concurrency > 1 && conn32) r.ratioToCeiling32 = r.metrics.stepsPerSec.median / conn32;
  }
}

/** Why Cairn's PostgreSQL cases cannot run ({ reason: null } when they can), and whether the raw ceiling can. */
async function postgresUnavailable(pgUrl) {
  try {
    await withPgClient(pgUrl, (client) => client.query("SELECT 1"));
  } catch (error) {
    return { reason: `cannot connect to PostgreSQL (${error.message})`, connects: false };
  }
  const target = freshTarget("postgres", { pgUrl });
  try {
    const store = await openStore(target.url);
    await store.close();
    return { reason: null, connects: true };
  } catch (error) {
    return { reason: `this build's openStore cannot open ${target.url.replace(/\/\/[^@/]*@/, "//…@")}: ${error.code ?? ""} ${error.message}`, connects: true };
  } finally {
    await target.cleanup().catch(() => undefined);
  }
}
