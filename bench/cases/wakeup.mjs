// Wake-up latency: from the `engine.sendEvent` call to the waiting run's next step function starting.
// Each repetition starts `samples` runs of bench-wake (wait for "go", then one step), lets them all
// suspend, then wakes them one at a time, each after the previous one finished. The worker uses the
// engine's default poll interval, so a wake-up that is not pushed shows as a poll-interval delay.
//   in-process (SQLite): the worker is in the sending engine's process, woken in-process.
//   worker process (PostgreSQL): the worker is another process, woken by LISTEN/NOTIFY; the step
//   reports its start on stdout with an epoch timestamp (performance.timeOrigin + now(), sub-ms).
import { createEngine, silentLogger } from "../../dist/src/index.js";
import { spawnWorkers, stopWorkers } from "../lib/processes.mjs";
import { fmt, quantile } from "../lib/stats.mjs";
import { hooks, wakeOnEvent, workflows } from "../workflows.mjs";

const TIMEOUT_MS = 30_000;
const epochNow = () => performance.timeOrigin + performance.now();

export async function wakeupCase(url, { processes, samples, reps, onProgress }) {
  const engine = await createEngine({ store: url, workflows, logger: silentLogger });
  const waiters = new Map();
  const marked = (runId, at) => {
    const waiter = waiters.get(runId);
    if (waiter) {
      waiters.delete(runId);
      waiter(at);
    }
  };
  let children = [];
  const previousHook = hooks.stepEntered;
  try {
    if (processes > 0) {
      onProgress("spawning the worker process");
      children = await spawnWorkers(url, processes, 32, { env: { BENCH_POLL_INTERVAL: "default" } });
      for (const child of children) {
        child.lines.on("line", (line) => {
          if (!line.startsWith("mark ")) return;
          const [, runId, at] = line.split(" ");
          marked(runId, Number(at));
        });
      }
    } else {
      hooks.stepEntered = (runId) => marked(runId, epochNow());
      engine.startWorker({ concurrency: 32 });
    }
    const out = { p50Ms: [], p99Ms: [], meanMs: [], maxMs: [] };
    for (let rep = 1; rep <= reps; rep++) {
      const last = out.p50Ms.length ? `, last p50 ${fmt(out.p50Ms.at(-1), 2)} ms` : "";
      onProgress(`rep ${rep}/${reps}: starting ${samples} runs${last}`);
      const ids = Array.from({ length: samples }, (_, i) => `wake-${rep}-${i}`);
      const handles = await Promise.all(ids.map((runId) => engine.start(wakeOnEvent, {}, { runId })));
      await waitAllSuspended(engine, ids);
      onProgress(`rep ${rep}/${reps}: waking ${samples} runs one at a time${last}`);
      const latencies = [];
      for (const [i, runId] of ids.entries()) {
        const entered = new Promise((resolve, reject) => {
          waiters.set(runId, resolve);
          setTimeout(() => reject(new Error(`${runId}: no step within ${TIMEOUT_MS} ms of its event`)), TIMEOUT_MS).unref();
        });
        const sent = epochNow();
        await engine.sendEvent(runId, "go", { i });
        latencies.push((await entered) - sent);
        if (processes === 0) await handles[i].result({ timeoutMs: TIMEOUT_MS });
        else await waitFinished(engine, runId);
      }
      out.p50Ms.push(quantile(latencies, 0.5));
      out.p99Ms.push(quantile(latencies, 0.99));
      out.maxMs.push(Math.max(...latencies));
      out.meanMs.push(latencies.reduce((a, b) => a + b, 0) / latencies.length);
    }
    return { samplesPerRep: samples, samples: out };
  } finally {
    hooks.stepEntered = previousHook;
    if (children.length) await stopWorkers(children);
    await engine.close();
  }
}

/** Resolves once every run in ids is suspended (polls the store every 20 ms). */
async function waitAllSuspended(engine, ids) {
  const deadline = Date.now() + TIMEOUT_MS;
  const pending = new Set(ids);
  while (pending.size > 0) {
    for (const runId of [...pending]) if ((await engine.getRun(runId)).status === "suspended") pending.delete(runId);
    if (pending.size === 0) break;
    if (Date.now() > deadline) throw new Error(`${pending.size} of ${ids.length} runs did not suspend within ${TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls (every 2 ms) until the run is completed, so the next sample does not overlap its last commit. */
async function waitFinished(engine, runId) {
  const deadline = Date.now() + TIMEOUT_MS;
  while ((await engine.getRun(runId)).status !== "completed") {
    if (Date.now() > deadline) throw new Error(`${runId} did not complete within ${TIMEOUT_MS} ms of its step`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
