// Cairn's benchmark suite: `npm run bench [-- --quick] [-- --only sqlite|postgres|memory] [-- --groups peers,resume]`.
// Progress on stderr, a table on stdout, everything in bench/out/results.json.
// Each figure is the median of repeated runs; ratios compare figures measured in this same run.
// The peers (DBOS, LangGraph.js, Restate, Vercel's Workflow DevKit) are dev dependencies of bench/package.json only: when
// bench/node_modules is missing they are installed with `npm --prefix bench ci` first.
import { modelStreamCase } from "./cases/model-stream.mjs";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { openStore } from "../dist/src/index.js";
import { pgCeiling, sqliteCeiling } from "./cases/ceiling.mjs";
import { overheadCase } from "./cases/overhead.mjs";
import { dbosThroughputCase, langgraphCase, missingPeers, restateThroughputCase, workflowDevkitThroughputCase } from "./cases/peers.mjs";
import { dbosResumeCase, restateResumeCase, resumeCase } from "./cases/resume.mjs";
import { loopResumeCase, metricName } from "./cases/resume-loop.mjs";
import { storageCase } from "./cases/storage.mjs";
import { suspendedCase } from "./cases/suspended.mjs";
import { throughputCase } from "./cases/throughput.mjs";
import { wakeupCase } from "./cases/wakeup.mjs";
import { describeMachine } from "./lib/machine.mjs";
import { baseUrl, withPgClient } from "./lib/pg.mjs";
import { Progress } from "./lib/progress.mjs";
import { fmt, median, signed, summarize } from "./lib/stats.mjs";
import { openProbe } from "./lib/probe.mjs";
import { freshDatabase, freshTarget } from "./lib/targets.mjs";
import { renderTables } from "./lib/report.mjs";

const STORES = ["memory", "sqlite", "postgres"];
/** Case groups, in the order of issue #4's list. */
const GROUPS = ["ceiling", "throughput", "peers", "overhead", "resume", "wakeup", "suspended", "storage", "stream"];
const USAGE = `Cairn's benchmark suite: node bench/run.mjs [options]   (npm run bench -- [options] builds first)

  --quick              fewer, shorter repetitions (a smoke test)            env BENCH_QUICK=1
  --only STORES        comma list of ${STORES.join(", ")}                 env BENCH_ONLY
  --groups GROUPS      comma list of ${GROUPS.join(", ")}
                                                                            env BENCH_GROUPS
  --reps N             repetitions per figure (default 5, --quick 2)        env BENCH_REPS
  --pg-url URL         PostgreSQL server (default CAIRN_TEST_PG_URL or postgres://postgres@127.0.0.1:5432/test)
                                                                            env BENCH_PG_URL
  --max-load L         a case that began or ended with the 1-minute load average above L ran under load
                       (default: the number of CPUs)
  --load-repeats N     run such a case again up to N times, keeping the attempt with the lowest load (default 1)
  --out FILE           the JSON results (default bench/out/results.json)
  -h, --help           this text

Progress goes to stderr, Markdown tables to stdout. node bench/results-md.mjs turns the JSON into bench/RESULTS.md.
`;
let parsedArgs;
try {
  parsedArgs = parseArgs({
    options: {
      help: { type: "boolean", short: "h", default: false },
      "max-load": { type: "string", default: process.env.BENCH_MAX_LOAD ?? "" },
      "load-repeats": { type: "string", default: process.env.BENCH_LOAD_REPEATS ?? "1" },
      quick: { type: "boolean", default: process.env.BENCH_QUICK === "1" },
    only: { type: "string", default: process.env.BENCH_ONLY ?? "" },
    groups: { type: "string", default: process.env.BENCH_GROUPS ?? "" },
    reps: { type: "string", default: process.env.BENCH_REPS ?? "" },
    "pg-url": { type: "string", default: process.env.BENCH_PG_URL ?? process.env.CAIRN_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test" },
      out: { type: "string", default: fileURLToPath(new URL("./out/results.json", import.meta.url)) },
    },
  });
} catch (error) {
  process.stderr.write(`${error.message}\n\n${USAGE}`);
  process.exit(2);
}
const args = parsedArgs.values;
if (args.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const maxLoad = args["max-load"] ? Number(args["max-load"]) : cpus().length;
const loadRepeats = Number(args["load-repeats"]);
if (!(maxLoad > 0) || !Number.isInteger(loadRepeats) || loadRepeats < 0) {
  process.stderr.write(`--max-load takes a number > 0 and --load-repeats a whole number ≥ 0\n\n${USAGE}`);
  process.exit(2);
}

const only = args.only ? args.only.split(",").map((s) => s.trim()) : STORES;
for (const name of only) {
  if (!STORES.includes(name)) {
    process.stderr.write(`--only: unknown store "${name}"; use ${STORES.join(", ")} (comma-separated)\n`);
    process.exit(2);
  }
}
const groups = new Set(args.groups ? args.groups.split(",").map((s) => s.trim()) : GROUPS);
for (const name of groups) {
  if (!GROUPS.includes(name)) {
    process.stderr.write(`--groups: unknown group "${name}"; use ${GROUPS.join(", ")} (comma-separated)\n`);
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
  /** Length of one repetition of a peer's throughput case. */
  peerTargetSec: quick ? 0.3 : 1,
  /** Journaled steps before the crash in the resume cases, and repetitions (Cairn; DBOS). */
  resumeSteps: 1000,
  resumeReps: quick ? 1 : reps,
  dbosResumeReps: quick ? 1 : Math.min(reps, 3),
  /** Journaled iterations of the crashed loop runs (item 5b; each run is written through the store), and their snapshot interval. */
  loopResumeIterations: [100, 10_000, 100_000],
  loopSnapshotEvery: 100,
  /** Wake-ups per repetition of the wake-up cases. */
  wakeSamples: quick ? 40 : 200,
  /** Suspended runs made in bulk; fresh worker processes measured with and without them; runs a worker suspends itself. */
  suspendedRuns: 100_000,
  suspendedReps: quick ? 1 : 3,
  suspendedSettleMs: quick ? 800 : 1500,
  selfSuspendedRuns: quick ? 1000 : 4000,
  /** Runs × steps of the storage case. */
  storageRuns: quick ? 10 : 20,
  storageSteps: quick ? 200 : 500,
  pgUrl: args["pg-url"],
  /** A case that began or ended with the 1-minute load average above this ran under load, and runs again up to loadRepeats times. */
  maxLoad,
  loadRepeats,
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
if ((groups.has("peers") || groups.has("resume")) && stores.some((s) => s !== "memory")) {
  const reason = ensurePeers();
  if (reason) {
    skipped.peers = reason;
    process.stderr.write(`peer cases (DBOS, LangGraph.js, Restate, Workflow DevKit) skipped: ${reason}\n`);
  }
}
const tmpDir = mkdtempSync(join(tmpdir(), "cairn-bench-"));
const cleanups = new Set();
process.on("SIGINT", async () => {
  process.stderr.write("\ninterrupted: cleaning up\n");
  for (const cleanup of cleanups) await cleanup().catch(() => undefined);
  rmSync(tmpDir, { recursive: true, force: true });
  process.exit(130);
});
const cases = planCases(stores).filter((c) => groups.has(c.group) && !(c.store === "postgres" && pgCeilingOnly && c.group !== "ceiling"));
const machine = { ...(await describeMachine({ pgUrl: settings.pgUrl, wantPg: stores.includes("postgres") })), loadAverageBefore };
const progress = new Progress(cases.length);
const results = [];
for (const c of cases) {
  progress.begin(c.label);
  // A case that began or ended under load runs again (up to --load-repeats times); the attempt with the lowest load is kept.
  const attempts = [];
  for (let attempt = 0; attempt <= loadRepeats; attempt++) {
    if (attempt > 0) progress.update(`load ${fmt(attempts.at(-1).peakLoad, 1)} > ${fmt(maxLoad, 1)}: again (attempt ${attempt + 1})`);
    const result = await runCase(c);
    result.peakLoad = Math.max(result.loadAverage, result.loadAverageAfter);
    attempts.push(result);
    if (result.error || result.peakLoad <= maxLoad) break;
  }
  const ok = attempts.filter((r) => !r.error);
  const kept = ok.length > 0 ? ok.reduce((best, r) => (r.peakLoad < best.peakLoad ? r : best)) : attempts.at(-1);
  kept.underLoad = kept.peakLoad > maxLoad;
  if (attempts.length > 1) {
    kept.attempts = attempts.length;
    kept.otherAttempts = attempts.filter((r) => r !== kept).map((r) => ({ loadAverage: r.loadAverage, loadAverageAfter: r.loadAverageAfter, headline: r.error ? "failed" : c.headline(r) }));
  }
  results.push(kept);
  if (kept.error) progress.end(`FAILED: ${kept.error.split("\n")[0]}`, "✗");
  else progress.end(`${c.headline(kept)}; load ${fmt(kept.loadAverage, 1)} → ${fmt(kept.loadAverageAfter, 1)}${kept.underLoad ? " (UNDER LOAD)" : ""}${attempts.length > 1 ? `, best of ${attempts.length}` : ""}`);
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

/** One attempt at a case, on a fresh target, with the 1-minute load average as it began and ended. */
async function runCase(c) {
  const target = c.target === "none" ? { cleanup: async () => {} } : c.target === "database" ? freshDatabase(settings.pgUrl) : freshTarget(c.store, { tmpDir, pgUrl: settings.pgUrl, name: c.id.replaceAll(/[^a-z0-9]+/gi, "-") });
  cleanups.add(target.cleanup);
  const t0 = performance.now();
  const loadAverage = loadavg()[0];
  let probe = null;
  try {
    if (target.create) await target.create();
    if (c.group === "throughput" || c.group === "overhead") probe = await openProbe(c.store, { tmpDir, pgUrl: settings.pgUrl, name: target.schema ?? c.id.replaceAll(/[^a-z0-9]+/gi, "-") });
    if (probe) cleanups.add(probe.close);
    const raw = await c.run(target, (text) => progress.update(text), probe);
    return { ...c.describe, id: c.id, store: c.store, group: c.group, label: c.label, loadAverage, loadAverageAfter: loadavg()[0], seconds: (performance.now() - t0) / 1000, ...digest(raw) };
  } catch (error) {
    return { id: c.id, store: c.store, group: c.group, label: c.label, loadAverage, loadAverageAfter: loadavg()[0], error: String(error?.stack ?? error) };
  } finally {
    if (probe) {
      cleanups.delete(probe.close);
      await probe.close().catch((error) => process.stderr.write(`closing the probe of ${c.id} failed: ${error.message}\n`));
    }
    await target.cleanup().catch((error) => process.stderr.write(`cleanup of ${c.id} failed: ${error.message}\n`));
    cleanups.delete(target.cleanup);
  }
}

/** The cases to run, in order, for the chosen stores. */
function planCases(chosen) {
  const list = [];
  const { reps, targetSec, ceilingMs, overheadSteps, probeMs } = settings;
  const onRep = (update) => (rep, perSec) => update(`rep ${rep}/${reps}: ${fmt(perSec)}/s`);
  const ceilingHeadline = (unit) => (r) => `${fmt(r.metrics.perSec.median)} ${unit} (${fmt(r.metrics.perSec.min)}–${fmt(r.metrics.perSec.max)})`;
  const throughputHeadline = (r) =>
    `${fmt(r.metrics.stepsPerSec.median)} steps/s, ${fmt(r.metrics.workflowsPerSec.median)} workflows/s (steps/s ${fmt(r.metrics.stepsPerSec.min)}–${fmt(r.metrics.stepsPerSec.max)})`;
  const overheadHeadline = (r) => `p50 ${fmt(r.metrics.p50Ms.median, 3)} ms, p99 ${fmt(r.metrics.p99Ms.median, 3)} ms`;
  const peerHeadline = (r) => `${fmt(r.metrics.stepsPerSec.median)} ${r.peer === "LangGraph.js" ? "nodes" : "steps"}/s (${fmt(r.metrics.stepsPerSec.min)}–${fmt(r.metrics.stepsPerSec.max)})`;

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
  const storesWith = (group) => chosen.filter((s) => s !== "memory" && groups.has(group));
  const peersOk = !skipped.peers;
  const { peerTargetSec } = settings;

  // 3. Peers: each figure pairs with the Cairn throughput case of the same store and concurrency.
  if (peersOk) {
    for (const concurrency of [1, 32]) {
      const mode = concurrency === 1 ? "sequential" : `c${concurrency}`;
      const common = { concurrency, reps, targetSec: peerTargetSec };
      if (storesWith("peers").includes("sqlite")) {
        for (const checkpointer of ["sqlite", "sqlite-full"]) {
          list.push({
            id: `sqlite.peers.langgraph-${checkpointer}.c${concurrency}`, store: "sqlite", group: "peers", label: `langgraph ${checkpointer} ${mode}`,
            describe: { peer: "LangGraph.js", checkpointer, concurrency, cairnCase: `sqlite.throughput.c${concurrency}` },
            headline: peerHeadline,
            run: (t, update) => langgraphCase(checkpointer, { file: t.file, ...common, onProgress: update }),
          });
        }
      }
      if (storesWith("peers").includes("postgres")) {
        list.push({
          id: `postgres.peers.dbos.c${concurrency}`, store: "postgres", group: "peers", label: `dbos ${mode}`, target: "database",
          describe: { peer: "DBOS Transact", checkpointer: "postgres", concurrency, cairnCase: `postgres.throughput.c${concurrency}` },
          headline: peerHeadline,
          run: (t, update) => dbosThroughputCase(t.url, { ...common, onProgress: update }),
        });
        list.push({
          id: `postgres.peers.langgraph-postgres.c${concurrency}`, store: "postgres", group: "peers", label: `langgraph postgres ${mode}`,
          describe: { peer: "LangGraph.js", checkpointer: "postgres", concurrency, cairnCase: `postgres.throughput.c${concurrency}` },
          headline: peerHeadline,
          run: (t, update) => langgraphCase("postgres", { pgUrl: baseUrl(settings.pgUrl), schema: t.schema, ...common, onProgress: update }),
        });
      }
      // Restate keeps its journal in its own server's log, so one case per concurrency, paired with
      // Cairn's figure on each store of this run (PostgreSQL's first, for the ratio in the JSON).
      const cairnStores = storesWith("peers").filter((s) => s === "sqlite" || s === "postgres").reverse();
      if (cairnStores.length) {
        list.push({
          id: `restate.peers.restate.c${concurrency}`, store: "restate", group: "peers", label: `restate ${mode}`, target: "none",
          describe: { peer: "Restate", checkpointer: "restate-server", concurrency, cairnCase: `${cairnStores[0]}.throughput.c${concurrency}`, cairnCases: cairnStores.map((s) => `${s}.throughput.c${concurrency}`) },
          headline: peerHeadline,
          run: (t, update) => restateThroughputCase({ ...common, onProgress: update }),
        });
        // Vercel's Workflow DevKit keeps its state in its local world's files (no fsync: a weaker
        // durability than Cairn's, stated beside its rows), paired the same way.
        list.push({
          id: `workflow-devkit.peers.local-world.c${concurrency}`, store: "workflow-devkit", group: "peers", label: `workflow devkit ${mode}`, target: "none",
          describe: { peer: "Workflow DevKit", checkpointer: "local-world", concurrency, cairnCase: `${cairnStores[0]}.throughput.c${concurrency}`, cairnCases: cairnStores.map((s) => `${s}.throughput.c${concurrency}`) },
          headline: peerHeadline,
          run: (t, update) => workflowDevkitThroughputCase({ ...common, onProgress: update }),
        });
      }
    }
  }

  // 5. Resume of a crashed run; 5b. of a crashed loop run, by its length.
  const { resumeSteps, resumeReps, dbosResumeReps, loopResumeIterations, loopSnapshotEvery } = settings;
  for (const store of storesWith("resume")) {
    list.push({
      id: `${store}.resume`, store, group: "resume", label: `${store} resume ${resumeSteps} steps`,
      describe: { who: "Cairn" },
      headline: (r) => `claim → step ${fmt(r.metrics.claimToStepMs.median, 1)} ms (${fmt(r.metrics.claimToStepMs.min, 1)}–${fmt(r.metrics.claimToStepMs.max, 1)}), replay ${fmt(r.metrics.replayMs.median, 1)} ms`,
      run: (t, update) => resumeCase(t.url, { steps: resumeSteps, reps: resumeReps, onProgress: update }),
    });
    if (store === "postgres" && peersOk) {
      list.push({
        id: "postgres.resume.dbos", store, group: "resume", label: `dbos resume ${resumeSteps} steps`, target: "database",
        describe: { who: "DBOS Transact" },
        headline: (r) => `launch → step ${fmt(r.metrics.launchToStepMs.median, 0)} ms, replay ${fmt(r.metrics.replayMs.median, 0)} ms`,
        run: (t, update) => dbosResumeCase(t.url, { steps: resumeSteps, reps: dbosResumeReps, onProgress: update }),
      });
    }
    if (store === storesWith("resume").at(-1) && peersOk) {
      list.push({
        id: "restate.resume", store: "restate", group: "resume", label: `restate resume ${resumeSteps} steps`, target: "none",
        describe: { who: "Restate", cairnCases: storesWith("resume").map((s) => `${s}.resume`) },
        headline: (r) => `attempt → step ${fmt(r.metrics.attemptToStepMs.median, 1)} ms, replay ${fmt(r.metrics.replayMs.median, 1)} ms, kill → step ${fmt(r.metrics.killToStepMs.median, 0)} ms`,
        run: (t, update) => restateResumeCase({ steps: resumeSteps, reps: dbosResumeReps, onProgress: update }),
      });
    }
    const sizes = loopResumeIterations;
    list.push({
      id: `${store}.resume.loop`, store, group: "resume", label: `${store} resume loop ${sizes.map((n) => fmt(n, 0)).join("/")}`,
      describe: { who: "Cairn", loop: true },
      headline: (r) =>
        `claim → step ${sizes.map((n) => `${fmt(n, 0)}: ${fmt(r.metrics[metricName("claimToStepMs", n)].median, 1)} ms`).join(", ")}; ${fmt(sizes.at(-1), 0)} ÷ ${fmt(sizes[0], 0)} ${fmt(r.claimToStepRatio, 2)}×`,
      run: (t, update) => loopResumeCase(t.url, { sizes, reps: resumeReps, snapshotEvery: loopSnapshotEvery, onProgress: update }),
    });
  }

  // 6. Wake-up latency: SQLite with the worker in the sender's process, PostgreSQL with it in another.
  for (const store of storesWith("wakeup")) {
    const processes = store === "postgres" ? 1 : 0;
    list.push({
      id: `${store}.wakeup`, store, group: "wakeup", label: `${store} wake-up ${processes ? "worker process" : "in-process"}`,
      describe: { processes, where: processes ? "worker process (LISTEN/NOTIFY)" : "in-process" },
      headline: (r) => `p50 ${fmt(r.metrics.p50Ms.median, 2)} ms, p99 ${fmt(r.metrics.p99Ms.median, 2)} ms`,
      run: (t, update) => wakeupCase(t.url, { processes, samples: settings.wakeSamples, reps, onProgress: update }),
    });
  }

  // 7. Suspended-run cost.
  for (const store of storesWith("suspended")) {
    list.push({
      id: `${store}.suspended`, store, group: "suspended", label: `${store} ${fmt(settings.suspendedRuns, 0)} suspended runs`,
      describe: {},
      headline: (r) => `worker RSS ${signed(r.metrics.deltaRssMB.median, 1)} MB, heap ${signed(r.metrics.deltaHeapMB.median, 2)} MB with ${fmt(r.runs, 0)} suspended runs`,
      run: (t, update) =>
        suspendedCase(t, {
          runs: settings.suspendedRuns, reps: settings.suspendedReps, settleMs: settings.suspendedSettleMs,
          selfRuns: settings.selfSuspendedRuns, wakeSamples: quick ? 5 : 20, onProgress: update,
        }),
    });
  }

  // 9. Time to first model delta through Cairn vs the provider SDK directly (issue 14): SQLite only.
  for (const store of storesWith("stream").filter((s) => s === "sqlite")) {
    list.push({
      id: `${store}.stream`, store, group: "stream", label: `${store} model stream time to first delta`,
      describe: { sdks: ["openai", "anthropic", "ai-sdk"] },
      headline: (r) =>
        ["openai", "anthropic", "ai-sdk"]
          .map(
            (n) =>
              `${n} adapter ${signed(r.metrics[`${n}.adapterOverheadMs`].median, 2)} ms (adds ${fmt(r.metrics[`${n}.adapterAddedUs`].median, 0)} µs), agent ${signed(r.metrics[`${n}.agentOverheadMs`].median, 2)} ms (engine adds ${fmt(r.metrics[`${n}.engineAddedUs`].median, 0)} µs)`,
          )
          .join("; "),
      run: (t, update) => modelStreamCase(t.url, { samples: quick ? 10 : 40, reps, onProgress: update }),
    });
  }

  // 8. Storage per journaled step.
  for (const store of storesWith("storage")) {
    list.push({
      id: `${store}.storage`, store, group: "storage", label: `${store} storage per step`,
      describe: {},
      headline: (r) => `${fmt(r.perStepBytes, 0)} bytes per step, ${fmt(r.overheadPerStepBytes, 0)} beyond its ${r.payloadBytes}-byte result`,
      run: (t, update) => storageCase(t, { runs: settings.storageRuns, steps: settings.storageSteps, onProgress: update }),
    });
  }
  return list;
}

/**
 * Whether the peers can run: installs bench/node_modules with `npm --prefix bench ci` when it is
 * missing (better-sqlite3 compiles from source: bench/.npmrc and npm_config_build_from_source keep
 * its install script from downloading a prebuilt binary). Returns why not, or null.
 */
function ensurePeers() {
  const benchDir = fileURLToPath(new URL(".", import.meta.url));
  if (!existsSync(join(benchDir, "node_modules"))) {
    process.stderr.write("bench/node_modules is missing: installing the peers with npm --prefix bench ci (better-sqlite3 compiles from source, about a minute)…\n");
    const npm = process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath]] : ["npm", []];
    const out = spawnSync(npm[0], [...npm[1], "--prefix", benchDir, "ci", "--no-audit", "--no-fund"], {
      env: { ...process.env, npm_config_build_from_source: "true" },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (out.status !== 0) {
      rmSync(join(benchDir, "node_modules"), { recursive: true, force: true });
      const tail = `${out.stderr ?? ""}${out.error ? String(out.error) : ""}`.trim().split("\n").slice(-5).join(" | ");
      return `npm --prefix bench ci failed (${out.status ?? out.signal}): ${tail}`;
    }
  }
  return missingPeers();
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
    if (r.error) continue;
    if (r.group === "peers") {
      const cairn = all.find((x) => x.id === r.cairnCase && !x.error);
      if (cairn) {
        r.cairnStepsPerSec = cairn.metrics.stepsPerSec.median;
        r.cairnOverPeer = r.cairnStepsPerSec / r.metrics.stepsPerSec.median;
      }
      if (r.cairnCases) {
        r.cairnByCase = r.cairnCases
          .map((id) => all.find((x) => x.id === id && !x.error))
          .filter(Boolean)
          .map((x) => ({ id: x.id, store: x.store, stepsPerSec: x.metrics.stepsPerSec.median, cairnOverPeer: x.metrics.stepsPerSec.median / r.metrics.stepsPerSec.median }));
      }
      continue;
    }
    if (r.id === "restate.resume") {
      r.cairn = r.cairnCases
        .map((id) => all.find((x) => x.id === id && !x.error))
        .filter(Boolean)
        .map((cairn) => ({
          id: cairn.id,
          claimToStepMs: cairn.metrics.claimToStepMs.median,
          replayMs: cairn.metrics.replayMs.median,
          peerOverCairn: r.metrics.attemptToStepMs.median / cairn.metrics.claimToStepMs.median,
          replayPeerOverCairn: r.metrics.replayMs.median / cairn.metrics.replayMs.median,
        }));
      continue;
    }
    if (r.id === "postgres.resume.dbos") {
      const cairn = all.find((x) => x.id === "postgres.resume" && !x.error);
      if (cairn) {
        r.cairnClaimToStepMs = cairn.metrics.claimToStepMs.median;
        r.cairnEngineToStepMs = cairn.metrics.engineToStepMs.median;
        r.peerOverCairn = r.metrics.launchToStepMs.median / r.cairnEngineToStepMs;
        r.replayPeerOverCairn = r.metrics.replayMs.median / cairn.metrics.replayMs.median;
      }
      continue;
    }
    if (r.group !== "throughput") continue;
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
