// Throughput: 10-step workflows of trivial steps, one at a time or with a backlog that workers
// hold `concurrency` of at once, in this process or in worker processes.
import { createEngine, silentLogger } from "../../dist/src/index.js";
import { cpuMeter, isLocalPg } from "../lib/cpu.mjs";
import { countPgQueries, countStoreCalls, diffCounts } from "../lib/instrument.mjs";
import { spawnWorkers, stopWorkers } from "../lib/processes.mjs";
import { fmt, quantile } from "../lib/stats.mjs";
import { STEPS, tenSteps, workflows } from "../workflows.mjs";

/** A batch that has not finished after this long fails its case (a stuck run, a dead worker). */
const BATCH_TIMEOUT_MS = 120_000;

/**
 * Returns per-repetition samples: stepsPerSec, workflowsPerSec, ceilingProbe (single-row commits/s
 * measured just before the repetition, when a probe is given), and for sequential runs the
 * start→result latency p50; also store calls and SQL statements per workflow.
 * `processes` 0 runs the worker in this process; N > 0 spreads `concurrency` over N worker processes
 * and times from the first run's creation to the last run's completion (journal timestamps).
 */
export async function throughputCase(url, { concurrency, processes = 0, reps, targetSec, maxRuns = 50_000, probe = null, probeMs = 300, onProgress }) {
  const pgQueries = url.startsWith("postgres") ? await countPgQueries() : null;
  const engine = await createEngine({ store: url, workflows, logger: silentLogger });
  let children = [];
  let counter = null;
  let totalRuns = 0;
  const result = {};
  try {
    if (processes > 0) {
      onProgress(`spawning ${processes} worker process${processes > 1 ? "es" : ""}`);
      children = await spawnWorkers(url, processes, Math.ceil(concurrency / processes));
    } else {
      counter = countStoreCalls(engine.store);
      engine.startWorker({ concurrency, pollInterval: 5 });
    }
    const batch = (n, prefix) => (concurrency === 1 && processes === 0 ? sequential(engine, n, prefix) : backlog(engine, n, prefix, processes > 0));

    onProgress("warm-up");
    const warmRuns = concurrency === 1 ? 10 : Math.max(2 * concurrency, 32);
    const warm = await batch(warmRuns, "warm");
    totalRuns += warmRuns;
    const minRuns = concurrency === 1 ? 10 : 4 * concurrency;
    const runs = Math.min(maxRuns, Math.max(minRuns, Math.round((targetSec * warmRuns) / (warm.ms / 1000))));

    const samples = { stepsPerSec: [], workflowsPerSec: [], ceilingProbe: [], ratioToProbe: [], latencyP50Ms: [], startPhaseMs: [], sqlPerWorkflow: [], commitP50Ms: [], commitP90Ms: [], commitP99Ms: [], engineCpuUsPerStep: [], serverCpuUsPerStep: [] };
    let calls = null;
    for (let rep = 1; rep <= reps; rep++) {
      onProgress(`rep ${rep}/${reps} (${runs} runs)${samples.stepsPerSec.length ? `, last ${fmt(samples.stepsPerSec.at(-1))} steps/s` : ""}`);
      const ceiling = probe ? await probe.measure(probeMs) : null;
      const before = counter?.snapshot();
      counter?.commitMs();
      const sqlBefore = pgQueries?.snapshot();
      const cpu = cpuMeter({ server: url.startsWith("postgres") && isLocalPg(url) });
      const timing = await batch(runs, `r${rep}`);
      const used = cpu.stop(runs * STEPS);
      // Worker processes' CPU is theirs, not this process's: only the in-process case says what the engine costs.
      if (processes === 0) samples.engineCpuUsPerStep.push(used.engineUsPerStep);
      if (used.serverUsPerStep !== null) samples.serverCpuUsPerStep.push(used.serverUsPerStep);
      totalRuns += runs;
      if (counter) {
        const diff = diffCounts(before, counter.snapshot());
        calls ??= Object.fromEntries(Object.keys(diff).map((k) => [k, []]));
        for (const [name, count] of Object.entries(diff)) calls[name].push(count / runs);
        const commitMs = counter.commitMs();
        samples.commitP50Ms.push(quantile(commitMs, 0.5));
        samples.commitP90Ms.push(quantile(commitMs, 0.9));
        samples.commitP99Ms.push(quantile(commitMs, 0.99));
      }
      if (pgQueries) samples.sqlPerWorkflow.push((pgQueries.snapshot() - sqlBefore) / runs);
      const stepsPerSec = (runs * STEPS) / (timing.ms / 1000);
      samples.stepsPerSec.push(stepsPerSec);
      samples.workflowsPerSec.push(runs / (timing.ms / 1000));
      if (ceiling) {
        samples.ceilingProbe.push(ceiling);
        samples.ratioToProbe.push(stepsPerSec / ceiling);
      }
      if (timing.latencies) samples.latencyP50Ms.push(quantile(timing.latencies, 0.5));
      if (timing.startPhaseMs !== undefined) samples.startPhaseMs.push(timing.startPhaseMs);
    }
    Object.assign(result, { runsPerRep: runs, samples, storeCallsPerWorkflow: calls });
  } finally {
    if (children.length > 0) {
      const stats = await stopWorkers(children);
      if (result.samples && stats.every(Boolean)) result.workerProcesses = summarizeWorkers(stats, totalRuns);
    }
    await engine.close();
  }
  return result;
}

/** Worker processes' store calls and SQL statements, summed, per workflow run (warm-up included). */
function summarizeWorkers(stats, totalRuns) {
  const storeCalls = {};
  for (const { storeCalls: calls } of stats) for (const [name, n] of Object.entries(calls)) storeCalls[name] = (storeCalls[name] ?? 0) + n;
  const sql = stats.every((s) => s.sqlStatements !== null) ? stats.reduce((a, s) => a + s.sqlStatements, 0) : null;
  return {
    runs: totalRuns,
    commitP50Ms: stats.map((s) => s.commitP50Ms),
    storeCallsPerWorkflow: Object.fromEntries(Object.entries(storeCalls).map(([name, n]) => [name, n / totalRuns])),
    sqlPerWorkflow: sql === null ? null : sql / totalRuns,
    perProcess: stats,
  };
}

function checkOutput(runId, output) {
  if (output !== STEPS) throw new Error(`run ${runId} returned ${JSON.stringify(output)}, not ${STEPS}`);
}

/** One run at a time: start, wait for its result, next. */
async function sequential(engine, n, prefix) {
  const latencies = [];
  const t0 = performance.now();
  const deadline = Date.now() + BATCH_TIMEOUT_MS;
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    const handle = await engine.start(tenSteps, { i }, { runId: `${prefix}-${i}` });
    checkOutput(handle.runId, await handle.result({ timeoutMs: Math.max(1, deadline - Date.now()) }));
    latencies.push(performance.now() - s);
  }
  return { ms: performance.now() - t0, latencies };
}

/**
 * Starts n runs at once, then waits for all. In-process, `result()` wakes as a run ends, so wall
 * time is exact. Across processes `result()` polls (100 ms), so the time is taken from the runs
 * themselves: first createdAt to last finishedAt.
 */
async function backlog(engine, n, prefix, fromJournal) {
  const t0 = performance.now();
  const deadline = Date.now() + BATCH_TIMEOUT_MS;
  const handles = await Promise.all(Array.from({ length: n }, (_, i) => engine.start(tenSteps, { i }, { runId: `${prefix}-${i}` })));
  const startPhaseMs = performance.now() - t0;
  for (const handle of handles) checkOutput(handle.runId, await handle.result({ timeoutMs: Math.max(1, deadline - Date.now()) }));
  const wallMs = performance.now() - t0;
  if (!fromJournal) return { ms: wallMs, startPhaseMs };
  const { first, last } = await runSpan(engine, prefix, n);
  return { ms: last - first, wallMs, startPhaseMs };
}

/** Earliest createdAt and latest finishedAt (epoch ms) of the n runs whose id starts with `${prefix}-`. */
async function runSpan(engine, prefix, n) {
  let first = Infinity;
  let last = -Infinity;
  let seen = 0;
  let cursor;
  do {
    const page = await engine.listRuns({ limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const run of page.runs) {
      if (!run.runId.startsWith(`${prefix}-`)) continue;
      seen += 1;
      first = Math.min(first, run.createdAt.getTime());
      last = Math.max(last, run.finishedAt.getTime());
    }
    cursor = page.nextCursor;
  } while (cursor && seen < n);
  if (seen !== n) throw new Error(`found ${seen} of ${n} runs of ${prefix}`);
  return { first, last };
}
