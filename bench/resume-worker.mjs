// The resume bench's worker process (bench/cases/resume.mjs), in one of two modes:
//   node bench/resume-worker.mjs crash    starts BENCH_RUN_ID (bench-resume with BENCH_STEPS trivial steps) and
//                                         runs it with a BENCH_LEASE_MS lease; prints "inflight" once the step
//                                         after them is running (its intent is durable), and hangs there until
//                                         the parent SIGKILLs it
//   node bench/resume-worker.mjs recover  a fresh worker: claims the crashed run once its lease expired, replays
//                                         it and finishes it; prints "result {json}" with when each thing happened
//                                         (epoch ms), the store calls made between the claim and the step, and
//                                         on PostgreSQL the SQL statements sent in between
import { createEngine, silentLogger } from "../dist/src/index.js";
import { exitWithParent, report } from "./lib/child.mjs";
import { countPgQueries, countStoreCalls, diffCounts } from "./lib/instrument.mjs";
import { hooks, resumeSteps, workflows } from "./workflows.mjs";

exitWithParent();

const mode = process.argv[2];
const runId = process.env.BENCH_RUN_ID;
const steps = Number(process.env.BENCH_STEPS);
const now = () => performance.timeOrigin + performance.now();

if (mode === "crash") {
  hooks.afterSteps = () => {
    process.stdout.write("inflight\n");
    return new Promise(() => {});
  };
  const engine = await createEngine({ store: process.env.BENCH_STORE, workflows, logger: silentLogger });
  await engine.start(resumeSteps, { steps }, { runId });
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
  const readJournal = engine.store.readJournal;
  engine.store.readJournal = async (...args) => {
    const start = now();
    const entries = await readJournal.apply(engine.store, args);
    if (args[0] === runId && !marks.entered) journalReads.push({ ms: now() - start, entries: entries.length });
    return entries;
  };
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
