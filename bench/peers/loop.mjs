// The throughput loop every peer child uses, the same shape as Cairn's throughput cases: a warm-up
// sizes the repetitions, then `reps` repetitions of `runs` workflow executions, either one after
// another (concurrency 1) or by `concurrency` clients that each start the next execution as soon
// as their last one finished (a closed loop: at most `concurrency` executions in flight).
import { report } from "../lib/child.mjs";
import { cpuMeter } from "../lib/cpu.mjs";

/**
 * runOne(id) executes one 10-step workflow (or 10-node graph) and resolves when it finished.
 * Returns { runsPerRep, samples: { stepsPerSec, workflowsPerSec, sqlPerStep? } }; sqlPerStep when a
 * statement `counter` (see countPgStatements) is given; peerCpuUsPerStep (this process) and, with
 * `serverCpu` (a PostgreSQL server on this machine), serverCpuUsPerStep.
 */
export async function throughputLoop(runOne, { concurrency, reps, targetSec, steps = 10, maxRuns = 20_000, label = "steps", counter = null, serverCpu = false }) {
  const batch = async (n, prefix) => {
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, n) }, async () => {
        while (next < n) {
          const i = next++;
          await runOne(`${prefix}-${i}`);
        }
      }),
    );
    return performance.now() - t0;
  };
  report.progress("warm-up");
  const warmRuns = concurrency === 1 ? 10 : Math.max(2 * concurrency, 32);
  const warmMs = await batch(warmRuns, "warm");
  const minRuns = concurrency === 1 ? 10 : 4 * concurrency;
  const runs = Math.min(maxRuns, Math.max(minRuns, Math.round((targetSec * warmRuns) / (warmMs / 1000))));
  const samples = { stepsPerSec: [], workflowsPerSec: [], sqlPerStep: [], peerCpuUsPerStep: [], serverCpuUsPerStep: [] };
  for (let rep = 1; rep <= reps; rep++) {
    report.progress(`rep ${rep}/${reps} (${runs} runs)${samples.stepsPerSec.length ? `, last ${Math.round(samples.stepsPerSec.at(-1))} ${label}/s` : ""}`);
    const before = counter?.count;
    const cpu = cpuMeter({ server: serverCpu });
    const ms = await batch(runs, `r${rep}`);
    const used = cpu.stop(runs * steps);
    samples.peerCpuUsPerStep.push(used.engineUsPerStep);
    if (used.serverUsPerStep !== null) samples.serverCpuUsPerStep.push(used.serverUsPerStep);
    samples.stepsPerSec.push((runs * steps) / (ms / 1000));
    samples.workflowsPerSec.push(runs / (ms / 1000));
    if (counter) samples.sqlPerStep.push((counter.count - before) / (runs * steps));
  }
  return { runsPerRep: runs, samples };
}

/** Settings the parent passes in the environment. */
export function settingsFromEnv() {
  return {
    reps: Number(process.env.BENCH_REPS ?? 3),
    targetSec: Number(process.env.BENCH_TARGET_SEC ?? 1),
    concurrency: Number(process.env.BENCH_CONCURRENCY ?? 1),
    steps: Number(process.env.BENCH_STEPS ?? 1000),
  };
}

/**
 * Counts every statement any `pg` client of this process sends (the peer's pool and its background
 * loops), by patching pg.Client.prototype.query of bench/node_modules/pg, the copy the peers load.
 */
export async function countPgStatements() {
  const { default: pg } = await import("pg");
  const counter = { count: 0 };
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function counted(...args) {
    counter.count += 1;
    return original.apply(this, args);
  };
  return counter;
}
