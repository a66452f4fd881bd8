// Per-step overhead: what Cairn adds around a no-op step, measured as the time between
// consecutive step functions starting in one sequential run (outcome commit of one step,
// replay bookkeeping, intent commit of the next).
import { createEngine, silentLogger } from "../../dist/src/index.js";
import { countPgQueries, countStoreCalls, diffCounts } from "../lib/instrument.mjs";
import { fmt, quantile } from "../lib/stats.mjs";
import { noopSteps, stepMarks, workflows } from "../workflows.mjs";

export async function overheadCase(url, { steps, reps, probe = null, probeMs = 300, onProgress }) {
  const pgQueries = url.startsWith("postgres") ? await countPgQueries() : null;
  const engine = await createEngine({ store: url, workflows, logger: silentLogger });
  const counter = countStoreCalls(engine.store);
  try {
    engine.startWorker({ concurrency: 1, pollInterval: 5 });
    const once = async (runId, n) => {
      const handle = await engine.start(noopSteps, { steps: n }, { runId });
      const output = await handle.result({ timeoutMs: 120_000 });
      if (output !== n) throw new Error(`run ${runId} returned ${JSON.stringify(output)}, not ${n}`);
      const marks = stepMarks.get(runId);
      stepMarks.delete(runId);
      return marks.slice(1).map((at, i) => at - marks[i]);
    };
    onProgress("warm-up");
    await once("warm", Math.min(50, steps));
    const samples = { p50Ms: [], p99Ms: [], meanMs: [], ceilingProbe: [], p50InCommits: [], sqlPerStep: [], commitP50Ms: [] };
    const commitsPerStep = [];
    for (let rep = 1; rep <= reps; rep++) {
      onProgress(`rep ${rep}/${reps} (${steps} steps)${samples.p50Ms.length ? `, last p50 ${fmt(samples.p50Ms.at(-1), 3)} ms` : ""}`);
      const ceiling = probe ? await probe.measure(probeMs) : null;
      const before = counter.snapshot();
      counter.commitMs();
      const sqlBefore = pgQueries?.snapshot();
      const deltas = await once(`r${rep}`, steps);
      commitsPerStep.push(diffCounts(before, counter.snapshot()).commit / steps);
      samples.commitP50Ms.push(quantile(counter.commitMs(), 0.5));
      if (pgQueries) samples.sqlPerStep.push((pgQueries.snapshot() - sqlBefore) / steps);
      samples.p50Ms.push(quantile(deltas, 0.5));
      samples.p99Ms.push(quantile(deltas, 0.99));
      samples.meanMs.push(deltas.reduce((a, b) => a + b, 0) / deltas.length);
      if (ceiling) {
        samples.ceilingProbe.push(ceiling);
        samples.p50InCommits.push(samples.p50Ms.at(-1) / (1000 / ceiling));
      }
    }
    return { stepsPerRep: steps, samples, commitsPerStep };
  } finally {
    await engine.close();
  }
}
