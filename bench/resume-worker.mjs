// The resume bench's worker process (bench/cases/resume.mjs, bench/cases/resume-loop.mjs), in one of two modes:
//   node bench/resume-worker.mjs crash    starts BENCH_RUN_ID (BENCH_WORKFLOW, default bench-resume, with input
//                                         BENCH_INPUT, default { steps: BENCH_STEPS }) and runs it with a
//                                         BENCH_LEASE_MS lease; prints "inflight" once its step "after" is
//                                         running (its intent is durable), and hangs there until the parent
//                                         SIGKILLs it
//   node bench/resume-worker.mjs recover  a fresh worker: claims the crashed run once its lease expired, replays
//                                         it and finishes it (its result must be BENCH_STEPS); prints
//                                         "result {json}" with when each thing happened (epoch ms), the journal
//                                         reads of the run (readJournal or readJournalForResume: entries, ms),
//                                         the store calls made between the claim and the step, and on
//                                         PostgreSQL the SQL statements sent in between
import { createEngine, silentLogger } from "../dist/src/index.js";
import { exitWithParent, report } from "./lib/child.mjs";
import { countPgQueries, countStoreCalls, diffCounts } from "./lib/instrument.mjs";
import { hooks, resumeWorkflows as workflows } from "./workflows.mjs";

exitWithParent();

const mode = process.argv[2];
const runId = process.env.BENCH_RUN_ID;
const steps = Number(process.env.BENCH_STEPS);
const workflow = process.env.BENCH_WORKFLOW || "bench-resume";
const input = process.env.BENCH_INPUT ? JSON.parse(process.env.BENCH_INPUT) : { steps };
const now = () => performance.timeOrigin + performance.now();

if (mode === "crash") {
  hooks.afterSteps = () => {
    process.stdout.write("inflight\n");
    return new Promise(() => {});
  };
  const engine = await createEngine({ store: process.env.BENCH_STORE, workflows, logger: silentLogger });
  await engine.start(workflow, input, { runId });
  engine.startWorker({ concurrency: 1, pollInterval: 5, leaseMs: Number(process.env.BENCH_LEASE_MS ?? 1000) });
} else if (mode === "recover") {
  const pgQueries = process.env.BENCH_STORE.startsWith("postgres") ? await countPgQueries() : null;
  const marks = { processStarted: performance.timeOrigin, engineCalled: now() };
  const engine = await createEngine({ store: process.env.BENCH_STORE, workflows, logger: silentLogger });
  marks.engineReady = now();
  const counter = countStoreCalls(engine.store);
  let atClaim = null;
  let atEntered = null;
  const journalReads = [];
  const claimRuns = engine.store.claimRuns;
  engine.store.claimRuns = async (...args) => {
    const called = now();
    const claimed = await claimRuns.apply(engine.store, args);
    if (!marks.claimed && claimed.some((run) => run.runId === runId)) {
      marks.claimCalled = called;
      marks.claimed = now();
      marks.sqlAtClaim = pgQueries?.snapshot();
      atClaim = counter.snapshot();
    }
    return claimed;
  };
  // The engine reads a run's journal with readJournalForResume when it starts executing it (readJournal
  // before that existed): both are recorded, until the in-flight step runs again.
  for (const method of ["readJournal", "readJournalForResume"]) {
    const original = engine.store[method];
    if (typeof original !== "function") continue;
    engine.store[method] = async (...args) => {
      const start = now();
      const entries = await original.apply(engine.store, args);
      if (args[0] === runId && !marks.entered) journalReads.push({ method, ms: now() - start, entries: entries.length, startedAt: start });
      return entries;
    };
  }
  hooks.workflowStarted = () => (marks.workflowStarted ??= now());
  hooks.afterSteps = () => {
    marks.entered ??= now();
    marks.sqlAtEntered ??= pgQueries?.snapshot();
    atEntered ??= counter.snapshot();
    return null;
  };
  engine.startWorker({ concurrency: 1, pollInterval: 5 });
  const total = await engine.result(runId, { timeoutMs: 120_000 });
  marks.done = now();
  if (total !== steps) throw new Error(`the recovered run returned ${JSON.stringify(total)}, not ${steps}`);
  const info = await engine.getRun(runId);
  await engine.close();
  report.result({ marks, journalReads, storeCallsClaimToStep: diffCounts(atClaim, atEntered), entriesAfter: info.entries });
  process.exit(0);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
