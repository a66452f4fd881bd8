// Resume: how long a fresh worker takes to recover a run that crashed after `steps` journaled steps,
// with the next step in flight. A worker process runs the run with a short lease; once that step's
// function is running the parent SIGKILLs it, waits for the lease to lapse, and starts a new worker
// process, which claims the run, replays its journal and runs the step again (its intent has no outcome).
// DBOS: the same workflow under DBOS Transact, SIGKILLed the same way; a new process's DBOS.launch()
// recovers it (DBOS has no leases: recovery is by executor id at launch).
// Restate: the same workflow as a Restate workflow whose SDK endpoint process is SIGKILLed the same
// way; the server (which stays up, as Cairn's store does) retries the invocation by its retry policy,
// and a new endpoint process on the same port gets the attempt with the journal and replays it.
import { fileURLToPath } from "node:url";
import { createEngine, silentLogger } from "../../dist/src/index.js";
import { startChild } from "../lib/child.mjs";
import { freePort, startRestateServer } from "../lib/restate-server.mjs";
import { fmt } from "../lib/stats.mjs";
import { workflows } from "../workflows.mjs";

const RESUME_WORKER = fileURLToPath(new URL("../resume-worker.mjs", import.meta.url));
const DBOS_CHILD = fileURLToPath(new URL("../peers/dbos.mjs", import.meta.url));
const RESTATE_CHILD = fileURLToPath(new URL("../peers/restate.mjs", import.meta.url));
const BENCH_DIR = fileURLToPath(new URL("..", import.meta.url));
const TIMEOUT_MS = 120_000;

/**
 * Per repetition: claim → the in-flight step entered again (claimToStepMs), claim → run completed,
 * the replay alone (workflow code restarted → step entered), a new process's engine creation → step,
 * how long building the crashed run took, and the journal reads of the recovery.
 */
export async function resumeCase(url, { steps, reps, leaseMs = 1000, onProgress }) {
  const engine = await createEngine({ store: url, workflows, logger: silentLogger });
  const samples = { claimToStepMs: [], claimToDoneMs: [], replayMs: [], engineToStepMs: [], journalReadMs: [], buildMs: [] };
  const details = [];
  try {
    for (let rep = 1; rep <= reps; rep++) {
      const runId = `resume-${rep}`;
      const env = { BENCH_STORE: url, BENCH_RUN_ID: runId, BENCH_STEPS: String(steps), BENCH_LEASE_MS: String(leaseMs) };
      const last = samples.claimToStepMs.length ? `, last ${fmt(samples.claimToStepMs.at(-1), 1)} ms` : "";
      onProgress(`rep ${rep}/${reps}: running ${steps} steps${last}`);
      const t0 = performance.now();
      const crash = startChild(RESUME_WORKER, { args: ["crash"], env });
      try {
        await crash.waitLine((line) => line === "inflight", TIMEOUT_MS);
      } finally {
        await crash.kill();
      }
      samples.buildMs.push(performance.now() - t0);
      const crashed = await engine.getRun(runId);
      if (crashed.status !== "running") throw new Error(`after the crash ${runId} is ${crashed.status}, not running`);
      onProgress(`rep ${rep}/${reps}: crashed with ${crashed.entries} journal entries; waiting out the lease`);
      await new Promise((resolve) => setTimeout(resolve, leaseMs + 200));
      onProgress(`rep ${rep}/${reps}: recovering`);
      const recover = startChild(RESUME_WORKER, { args: ["recover"], env });
      const out = await recover.result(TIMEOUT_MS);
      await recover.exited;
      const { marks } = out;
      if ((await engine.getRun(runId)).status !== "completed") throw new Error(`${runId} did not complete after recovery`);
      samples.claimToStepMs.push(marks.entered - marks.claimed);
      samples.claimToDoneMs.push(marks.done - marks.claimed);
      samples.replayMs.push(marks.entered - marks.workflowStarted);
      samples.engineToStepMs.push(marks.entered - marks.engineCalled);
      samples.journalReadMs.push(out.journalReads.reduce((a, r) => a + r.ms, 0));
      details.push({
        entriesAtCrash: crashed.entries,
        journalReads: out.journalReads,
        storeCallsClaimToStep: out.storeCallsClaimToStep,
        sqlClaimToStep: marks.sqlAtClaim === undefined || marks.sqlAtClaim === null ? null : marks.sqlAtEntered - marks.sqlAtClaim,
        claimQueryMs: marks.claimed - marks.claimCalled,
      });
    }
  } finally {
    await engine.close();
  }
  return { steps, samples, details };
}

/** DBOS's recovery of the same workflow: launch() → the in-flight step entered again, and the replay alone. */
export async function dbosResumeCase(dbosUrl, { steps, reps, onProgress }) {
  const samples = { launchToStepMs: [], replayMs: [], launchMs: [], launchToReplayMs: [], buildMs: [], replaySql: [] };
  for (let rep = 1; rep <= reps; rep++) {
    const env = { BENCH_DBOS_URL: dbosUrl, BENCH_WORKFLOW_ID: `resume-${rep}`, BENCH_STEPS: String(steps) };
    const last = samples.launchToStepMs.length ? `, last ${fmt(samples.launchToStepMs.at(-1), 0)} ms` : "";
    onProgress(`rep ${rep}/${reps}: running ${steps} steps${last}`);
    const t0 = performance.now();
    const crash = startChild(DBOS_CHILD, { args: ["crash"], env, cwd: BENCH_DIR });
    try {
      await crash.waitLine((line) => line === "inflight", TIMEOUT_MS);
    } finally {
      await crash.kill();
    }
    samples.buildMs.push(performance.now() - t0);
    onProgress(`rep ${rep}/${reps}: recovering`);
    const recover = startChild(DBOS_CHILD, { args: ["recover"], env, cwd: BENCH_DIR });
    const marks = await recover.result(TIMEOUT_MS);
    await recover.exited;
    samples.launchToStepMs.push(marks.entered - marks.launchCalled);
    samples.replayMs.push(marks.entered - marks.workflowStarted);
    samples.launchMs.push(marks.launched - marks.launchCalled);
    samples.launchToReplayMs.push(marks.workflowStarted - marks.launched);
    samples.replaySql.push(marks.sqlAtEntered - marks.sqlAtStart);
  }
  return { steps, samples };
}

/**
 * Restate's recovery of the same workflow. Per repetition: the invocation attempt arriving at the new
 * endpoint process → the in-flight step entered again (attemptToStepMs, Cairn's claim → step), of which
 * attempt → handler restarted (attemptToReplayMs: the journal's transfer and decoding), the replay alone (handler restarted → step), the new process's start → step, the SIGKILL → step (which
 * includes the server's retry back-off) and the attempt → workflow completed.
 */
export async function restateResumeCase({ steps, reps, onProgress }) {
  const server = await startRestateServer({ onProgress });
  const samples = { attemptToStepMs: [], attemptToReplayMs: [], attemptToDoneMs: [], replayMs: [], processToStepMs: [], killToStepMs: [], listeningToAttemptMs: [], buildMs: [] };
  try {
    const port = await freePort();
    for (let rep = 1; rep <= reps; rep++) {
      const env = { BENCH_RESTATE_INGRESS: server.ingressUrl, BENCH_RESTATE_ADMIN: server.adminUrl, BENCH_RESTATE_PORT: String(port), BENCH_WORKFLOW_ID: `resume-${rep}`, BENCH_STEPS: String(steps) };
      const last = samples.attemptToStepMs.length ? `, last ${fmt(samples.attemptToStepMs.at(-1), 1)} ms` : "";
      onProgress(`rep ${rep}/${reps}: running ${steps} steps${last}`);
      const t0 = performance.now();
      const crash = startChild(RESTATE_CHILD, { args: ["crash"], env, cwd: BENCH_DIR });
      let killedAt;
      try {
        await crash.waitLine((line) => line === "inflight", TIMEOUT_MS);
      } finally {
        await crash.kill();
        killedAt = performance.timeOrigin + performance.now();
      }
      samples.buildMs.push(performance.now() - t0);
      onProgress(`rep ${rep}/${reps}: recovering`);
      const recover = startChild(RESTATE_CHILD, { args: ["recover"], env, cwd: BENCH_DIR });
      try {
        const marks = await recover.result(TIMEOUT_MS);
        await recover.exited;
        samples.attemptToStepMs.push(marks.entered - marks.attemptArrived);
        samples.attemptToReplayMs.push(marks.workflowStarted - marks.attemptArrived);
        samples.attemptToDoneMs.push(marks.done - marks.attemptArrived);
        samples.replayMs.push(marks.entered - marks.workflowStarted);
        samples.processToStepMs.push(marks.entered - marks.processStarted);
        samples.killToStepMs.push(marks.entered - killedAt);
        samples.listeningToAttemptMs.push(marks.attemptArrived - marks.listening);
      } finally {
        await recover.kill();
      }
    }
  } finally {
    await server.stop();
  }
  return { steps, samples, server: server.version, durability: server.durability };
}
