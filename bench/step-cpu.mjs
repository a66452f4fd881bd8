// CPU per step: this process's CPU time (process.cpuUsage, user + system) per workflow step, which
// other load on the machine barely moves, beside wall-clock steps/s, which it does.
//   node bench/step-cpu.mjs [sqlite|postgres|memory] [--concurrency 1] [--runs 300] [--rounds 5] [--pg-url URL] [--dist DIR]
// `--dist` loads Cairn from another build (a copy of dist/ kept from before a change), for A/B runs.
// `--synchronous OFF` opens SQLite without the per-commit fsync: not a durable setting, but it leaves
// Cairn's and SQLite's own CPU without the disk's share, which other load on the machine moves most.
// Each round uses a fresh store and a warm-up, then times `runs` 10-step workflows (start, then
// result, one at a time when concurrency is 1; a backlog that the worker holds `concurrency` of at
// once otherwise) and, as the marginal cost of a step alone, 50-step workflows: (cpu50 − cpu10) / 40
// per step leaves out run creation, completion and result(). Prints each round and the medians.
// On PostgreSQL the figure is the engine process only (the server's CPU is not counted).
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";
import { freshTarget } from "./lib/targets.mjs";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    concurrency: { type: "string", default: "1" },
    runs: { type: "string", default: "300" },
    rounds: { type: "string", default: "5" },
    dist: { type: "string" },
    synchronous: { type: "string" },
    "pg-url": { type: "string", default: process.env.BENCH_PG_URL ?? process.env.CAIRN_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write(
    "node bench/step-cpu.mjs [sqlite|postgres|memory] [--concurrency 1] [--runs 300] [--rounds 5] [--pg-url URL] [--dist DIR] [--synchronous OFF]\n" +
      "CPU time per workflow step (this process) beside steps/s; --dist loads another build for A/B (see the comment at the top of the file).\n",
  );
  process.exit(0);
}
const entry = values.dist ? pathToFileURL(join(values.dist, "src/index.js")).href : new URL("../dist/src/index.js", import.meta.url).href;
const { createEngine, defineWorkflow, openStore, silentLogger } = await import(entry);
const kind = positionals[0] ?? "sqlite";
const concurrency = Number(values.concurrency);
const runs = Number(values.runs);
const rounds = Number(values.rounds);

const nSteps = defineWorkflow({
  name: "bench-n-steps",
  version: "1",
  async run(ctx, input) {
    let total = 0;
    for (let i = 0; i < input.steps; i++) total = await ctx.step("s", () => total + 1);
    return total;
  },
});

/** CPU time of this process's main thread in µs (Linux schedstat), which leaves out the compiler and GC helper threads; null elsewhere. */
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
const mainThreadUs = existsSync(SCHEDSTAT) ? () => Number(readFileSync(SCHEDSTAT, "utf8").split(" ")[0]) / 1000 : () => null;
/** User-mode CPU time of the main thread in µs (Linux, 10 ms ticks): without the kernel's share (fsync, writes), which the disk's state moves. */
const STAT = `/proc/self/task/${process.pid}/stat`;
const mainUserUs = existsSync(STAT) ? () => Number(readFileSync(STAT, "utf8").split(") ")[1].split(" ")[11]) * 10_000 : () => null;

async function batch(engine, n, steps, prefix) {
  const main0 = mainThreadUs();
  const user0 = mainUserUs();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  if (concurrency === 1) {
    for (let i = 0; i < n; i++) {
      const handle = await engine.start(nSteps, { steps }, { runId: `${prefix}-${i}` });
      if ((await handle.result()) !== steps) throw new Error("wrong output");
    }
  } else {
    const handles = await Promise.all(Array.from({ length: n }, (_, i) => engine.start(nSteps, { steps }, { runId: `${prefix}-${i}` })));
    for (const handle of handles) if ((await handle.result()) !== steps) throw new Error("wrong output");
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const main1 = mainThreadUs();
  const user1 = mainUserUs();
  return { cpuUs: cpu.user + cpu.system, mainUs: main0 === null ? null : main1 - main0, mainUserUs: user0 === null ? null : user1 - user0, ms };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const rows = [];
for (let round = 1; round <= rounds; round++) {
  const tmpDir = mkdtempSync(join(tmpdir(), "cairn-step-cpu-"));
  const target = freshTarget(kind, { tmpDir, pgUrl: values["pg-url"], name: "step-cpu" });
  const store = values.synchronous ? await openStore(target.url, { synchronous: values.synchronous }) : target.url;
  const engine = await createEngine({ store, workflows: [nSteps], logger: silentLogger });
  try {
    engine.startWorker({ concurrency, pollInterval: 5 });
    // Long enough for the hot functions to be optimized before the timed batches.
    await batch(engine, Math.max(200, concurrency * 4), 10, "warm");
    const ten = await batch(engine, runs, 10, "ten");
    const fifty = await batch(engine, Math.max(1, Math.round(runs / 5)), 50, "fifty");
    const fiftyRuns = Math.max(1, Math.round(runs / 5));
    const row = {
      cpuPerStep: ten.cpuUs / (runs * 10),
      mainPerStep: ten.mainUs === null ? null : ten.mainUs / (runs * 10),
      mainUserPerStep: ten.mainUserUs === null ? null : ten.mainUserUs / (runs * 10),
      stepsPerSec: (runs * 10) / (ten.ms / 1000),
      marginalCpuPerStep: (fifty.cpuUs / fiftyRuns - ten.cpuUs / runs) / 40,
    };
    rows.push(row);
    process.stdout.write(
      `round ${round}: ${row.cpuPerStep.toFixed(1)} CPU µs/step (main thread ${row.mainPerStep?.toFixed(1) ?? "n/a"}, of it user ${row.mainUserPerStep?.toFixed(1) ?? "n/a"}), ${Math.round(row.stepsPerSec)} steps/s, marginal step ${row.marginalCpuPerStep.toFixed(1)} CPU µs\n`,
    );
  } finally {
    await engine.close();
    if (typeof store === "object") await store.close();
    await target.cleanup();
    rmSync(tmpDir, { recursive: true, force: true });
  }
}
process.stdout.write(
  `median ${kind} c${concurrency}: ${median(rows.map((r) => r.cpuPerStep)).toFixed(1)} CPU µs/step (main thread ${rows[0].mainPerStep === null ? "n/a" : median(rows.map((r) => r.mainPerStep)).toFixed(1)}, of it user ${rows[0].mainUserPerStep === null ? "n/a" : median(rows.map((r) => r.mainUserPerStep)).toFixed(1)}), ${Math.round(median(rows.map((r) => r.stepsPerSec)))} steps/s, marginal step ${median(rows.map((r) => r.marginalCpuPerStep)).toFixed(1)} CPU µs\n`,
);
