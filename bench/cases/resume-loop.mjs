// Resume of a loop run (issue item 5b): how long a fresh worker takes to recover a bench-loop run that
// crashed after 100, 10,000 or 100,000 journaled iterations, with the step of the next iteration in flight.
// Running 100,000 iterations live would take minutes per repetition, so each crashed run is written
// directly through the store: the same entries, in the same order and with the same payloads, as a live
// run writes up to that point (claimed with a short lease that then lapses, as a SIGKILLed worker's does).
// Once per case the builder is checked against a live run of 100 iterations crashed the same way, and the
// case fails if their journals differ. The recovery is measured exactly as bench/cases/resume.mjs does
// it, by a fresh bench/resume-worker.mjs process in "recover" mode.
import { isDeepStrictEqual } from "node:util";
import { fileURLToPath } from "node:url";
import { createEngine, encode, silentLogger } from "../../dist/src/index.js";
import { startChild } from "../lib/child.mjs";
import { fmt, median } from "../lib/stats.mjs";
import { loopSteps, resumeWorkflows } from "../workflows.mjs";

const RESUME_WORKER = fileURLToPath(new URL("../resume-worker.mjs", import.meta.url));
const TIMEOUT_MS = 120_000;
/** The key of bench-loop's loop op (its first `ctx.loop("iterate")`); the live comparison checks it. */
const LOOP_KEY = "iterate#0";
/** Entries per store commit while building a crashed run. */
const BATCH = 1000;

/** The samples' names per size: `${name}@${iterations}`, so each gets the usual summary in results.json. */
export const metricName = (name, iterations) => `${name}@${iterations}`;

/**
 * Per repetition and size: claim → the in-flight step entered again (claimToStepMs), claim → run completed,
 * the replay alone (workflow code restarted → step entered), claim → the journal read started, the journal
 * read (entries, ms), how long building the crashed run took, and the new process's createEngine, its time
 * from then to the claim, and the claim query alone.
 */
export async function loopResumeCase(url, { sizes, reps, snapshotEvery, leaseMs = 1000, onProgress }) {
  const engine = await createEngine({ store: url, workflows: resumeWorkflows, logger: silentLogger });
  const samples = {};
  const push = (name, iterations, value) => (samples[metricName(name, iterations)] ??= []).push(value);
  const details = Object.fromEntries(sizes.map((n) => [n, []]));
  try {
    onProgress(`checking the run builder against a live run of 100 iterations`);
    const validation = await validateBuilder(engine, { iterations: 100, snapshotEvery, leaseMs });
    for (let rep = 1; rep <= reps; rep++) {
      // Alternate the order of the sizes, so none always goes first after the builder check or a larger build.
      for (const iterations of rep % 2 === 1 ? sizes : [...sizes].reverse()) {
        const runId = `loop-${iterations}-${rep}`;
        const tag = `rep ${rep}/${reps}, ${fmt(iterations, 0)} iterations`;
        onProgress(`${tag}: building the crashed run`);
        const t0 = performance.now();
        const built = await buildCrashedLoopRun(engine.store, runId, { iterations, snapshotEvery, leaseMs });
        const buildMs = performance.now() - t0;
        const crashed = await engine.getRun(runId);
        if (crashed.status !== "running") throw new Error(`the built run ${runId} is ${crashed.status}, not running`);
        const waitMs = Math.max(0, built.leaseExpiresAt - Date.now()) + 200;
        onProgress(`${tag}: ${fmt(crashed.entries, 0)} entries in ${fmt(buildMs / 1000, 1)} s; waiting out the lease`);
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        onProgress(`${tag}: recovering`);
        const env = { BENCH_STORE: url, BENCH_RUN_ID: runId, BENCH_WORKFLOW: loopSteps.name, BENCH_STEPS: String(iterations) };
        const recover = startChild(RESUME_WORKER, { args: ["recover"], env });
        const out = await recover.result(TIMEOUT_MS);
        await recover.exited;
        const { marks } = out;
        if ((await engine.getRun(runId)).status !== "completed") throw new Error(`${runId} did not complete after recovery`);
        push("claimToStepMs", iterations, marks.entered - marks.claimed);
        push("claimToDoneMs", iterations, marks.done - marks.claimed);
        push("replayMs", iterations, marks.entered - marks.workflowStarted);
        push("engineToStepMs", iterations, marks.entered - marks.engineCalled);
        push("journalReadMs", iterations, out.journalReads.reduce((a, r) => a + r.ms, 0));
        if (out.journalReads[0]) push("claimToReadMs", iterations, out.journalReads[0].startedAt - marks.claimed);
        push("buildMs", iterations, buildMs);
        push("engineOpenMs", iterations, marks.engineReady - marks.engineCalled);
        push("engineReadyToClaimMs", iterations, marks.claimed - marks.engineReady);
        push("claimQueryMs", iterations, marks.claimed - marks.claimCalled);
        details[iterations].push({
          entriesAtCrash: crashed.entries,
          journalReads: out.journalReads.map(({ method, entries, ms }) => ({ method, entries, ms })),
          storeCallsClaimToStep: out.storeCallsClaimToStep,
          sqlClaimToStep: marks.sqlAtClaim === undefined || marks.sqlAtClaim === null ? null : marks.sqlAtEntered - marks.sqlAtClaim,
          claimQueryMs: marks.claimed - marks.claimCalled,
        });
      }
    }
    // Item 5b's figure: the longest run's median claim → step over the shortest's.
    const claimToStep = (n) => median(samples[metricName("claimToStepMs", n)]);
    const claimToStepRatio = claimToStep(Math.max(...sizes)) / claimToStep(Math.min(...sizes));
    return { loop: true, sizes, snapshotEvery, validation, claimToStepRatio, samples, details };
  } finally {
    await engine.close();
  }
}

/**
 * Writes, through `store`, a bench-loop run that crashed in iteration `iterations` with its step "after"
 * in flight: run.created, run.claimed (a worker that holds a `leaseMs` lease), loop.started, per iteration
 * step.started and step.completed of `iterate#0/<i>/s#0`, a loop.snapshot after every `snapshotEvery`
 * iterations, and the intent of `iterate#0/<iterations>/after#0` without an outcome. Returns
 * { leaseExpiresAt, entries }.
 */
export async function buildCrashedLoopRun(store, runId, { iterations, snapshotEvery, leaseMs }) {
  const { name: workflow, version } = loopSteps;
  const created = await store.createRun({ runId, workflow, version, input: encode({ iterations, snapshotEvery }) }, Date.now());
  if (!created.created) throw new Error(`run ${runId} exists already`);
  const [run, ...others] = await store.claimRuns({ workerId: `bench-loop-builder-${process.pid}`, now: Date.now(), leaseMs, limit: 1, workflows: [{ name: workflow, version }] });
  if (!run || run.runId !== runId || others.length) {
    throw new Error(`building ${runId}: the claim took ${run ? run.runId : "nothing"}, not ${runId} (is an older run of ${workflow} still runnable?)`);
  }
  const entry = (kind, opKey, data) => ({ kind, opKey, data, payload: encode(data) });
  let batch = [];
  let entries = run.lastSeq;
  const flush = async () => {
    if (batch.length === 0) return null;
    const [result] = await store.commit([{ runId, epoch: run.leaseEpoch, entries: batch }], Date.now());
    if (!result?.ok) throw new Error(`building ${runId}: a commit of ${batch.length} entries was refused (${result?.reason})`);
    entries = result.lastSeq;
    batch = [];
    return result;
  };
  batch.push(entry("loop.started", LOOP_KEY, { snapshotEvery }));
  const from = (await flush()).firstSeq + 1;
  for (let i = 0; i < iterations; i++) {
    const key = `${LOOP_KEY}/${i}/s#0`;
    batch.push(entry("step.started", key, { attempt: 1 }), entry("step.completed", key, { result: i + 1, attempt: 1 }));
    const done = i + 1;
    if (snapshotEvery > 0 && done % snapshotEvery === 0) batch.push(entry("loop.snapshot", LOOP_KEY, { iteration: done, state: done, from, keep: [] }));
    if (batch.length >= BATCH) await flush();
  }
  batch.push(entry("step.started", `${LOOP_KEY}/${iterations}/after#0`, { attempt: 1 }));
  await flush();
  return { leaseExpiresAt: run.leaseExpiresAt ?? Date.now() + leaseMs, entries };
}

/**
 * Crashes a live bench-loop run of `iterations` iterations (a worker process SIGKILLed while its step
 * "after" runs) and builds one with {@link buildCrashedLoopRun}; throws unless their journals hold the
 * same entries: kinds, op keys and decoded data, leaving out only the claim's worker id and epoch.
 * Both runs are cancelled afterwards, so no later claim can take them.
 */
async function validateBuilder(engine, { iterations, snapshotEvery, leaseMs }) {
  const liveId = "loop-check-live";
  const builtId = "loop-check-built";
  const env = {
    BENCH_STORE: engine.store.url,
    BENCH_RUN_ID: liveId,
    BENCH_WORKFLOW: loopSteps.name,
    BENCH_INPUT: JSON.stringify({ iterations, snapshotEvery }),
    BENCH_STEPS: String(iterations),
    BENCH_LEASE_MS: String(leaseMs),
  };
  const t0 = performance.now();
  const crash = startChild(RESUME_WORKER, { args: ["crash"], env });
  try {
    await crash.waitLine((line) => line === "inflight", TIMEOUT_MS);
  } finally {
    await crash.kill();
  }
  const liveMs = performance.now() - t0;
  // Cancelled before the build, whose claim would otherwise take it once its lease lapses.
  const live = await engine.journal(liveId);
  await engine.cancel(liveId, "bench: builder check");
  const t1 = performance.now();
  await buildCrashedLoopRun(engine.store, builtId, { iterations, snapshotEvery, leaseMs });
  const builtMs = performance.now() - t1;
  const built = await engine.journal(builtId);
  await engine.cancel(builtId, "bench: builder check");
  const comparable = (e) => {
    const data = e.data !== null && typeof e.data === "object" && !Array.isArray(e.data) ? { ...e.data } : e.data;
    if (e.kind === "run.claimed") {
      delete data.workerId;
      delete data.epoch;
    }
    return { seq: e.seq, kind: e.kind, opKey: e.opKey, data };
  };
  const a = live.map(comparable);
  const b = built.map(comparable);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (!isDeepStrictEqual(a[i], b[i])) {
      throw new Error(
        `the loop-run builder does not write what a live run writes (${a.length} live entries, ${b.length} built): entry ${i + 1} is ${JSON.stringify(a[i]) ?? "missing"} live but ${JSON.stringify(b[i]) ?? "missing"} built`,
      );
    }
  }
  return { iterations, entries: a.length, liveMs, builtMs };
}
