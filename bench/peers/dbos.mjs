// DBOS Transact on PostgreSQL, the same work as Cairn's cases. Run by bench/cases/peers.mjs and
// bench/cases/resume.mjs in a process of its own (DBOS is a per-process singleton):
//   node bench/peers/dbos.mjs throughput   10-step workflows of trivial steps; BENCH_CONCURRENCY, BENCH_REPS, BENCH_TARGET_SEC
//   node bench/peers/dbos.mjs crash        starts a workflow of BENCH_STEPS trivial steps and one more; prints
//                                           "inflight" once that last step is running, then hangs (to be SIGKILLed)
//   node bench/peers/dbos.mjs recover      launches DBOS, which recovers the crashed workflow; prints when the
//                                           workflow function restarted, when the last step was entered, and completion
// BENCH_DBOS_URL is DBOS's system database (the case creates and drops it). Every mode registers the
// same workflows, so the application version DBOS derives from them matches across processes.
import { DBOS } from "@dbos-inc/dbos-sdk";
import { exitWithParent, report } from "../lib/child.mjs";
import { isLocalPg } from "../lib/cpu.mjs";
import { countPgStatements, settingsFromEnv, throughputLoop } from "./loop.mjs";

exitWithParent();

const mode = process.argv[2];
const now = () => performance.timeOrigin + performance.now();
const marks = {};
let afterStep = async () => null;
let started = () => {};

const tenSteps = DBOS.registerWorkflow(
  async () => {
    let total = 0;
    for (let i = 0; i < 10; i++) total = await DBOS.runStep(async () => total + 1, { name: "s" });
    return total;
  },
  { name: "bench-ten-steps" },
);

const resumeSteps = DBOS.registerWorkflow(
  async (steps) => {
    started();
    let total = 0;
    for (let i = 0; i < steps; i++) total = await DBOS.runStep(async () => total + 1, { name: "s" });
    await DBOS.runStep(() => afterStep(), { name: "after" });
    return total;
  },
  { name: "bench-resume" },
);

DBOS.setConfig({ name: "cairn-bench", systemDatabaseUrl: process.env.BENCH_DBOS_URL, logLevel: "error" });
const settings = settingsFromEnv();

if (mode === "throughput") {
  const counter = await countPgStatements();
  await DBOS.launch();
  const out = await throughputLoop(
    async (id) => {
      const handle = await DBOS.startWorkflow(tenSteps, { workflowID: `${process.pid}-${id}` })();
      const total = await handle.getResult();
      if (total !== 10) throw new Error(`workflow ${id} returned ${total}, not 10`);
    },
    { ...settings, steps: 10, counter, serverCpu: isLocalPg(process.env.BENCH_DBOS_URL) },
  );
  await DBOS.shutdown();
  report.result(out);
  process.exit(0);
} else if (mode === "crash") {
  afterStep = () => {
    process.stdout.write("inflight\n");
    return new Promise(() => {});
  };
  await DBOS.launch();
  await DBOS.startWorkflow(resumeSteps, { workflowID: process.env.BENCH_WORKFLOW_ID })(settings.steps);
  setInterval(() => {}, 60_000);
} else if (mode === "recover") {
  const counter = await countPgStatements();
  started = () => {
    marks.workflowStarted ??= now();
    marks.sqlAtStart ??= counter.count;
  };
  afterStep = async () => {
    marks.entered ??= now();
    marks.sqlAtEntered ??= counter.count;
    return null;
  };
  marks.launchCalled = now();
  await DBOS.launch();
  marks.launched = now();
  const total = await DBOS.retrieveWorkflow(process.env.BENCH_WORKFLOW_ID).getResult();
  marks.done = now();
  if (total !== settings.steps) throw new Error(`the recovered workflow returned ${total}, not ${settings.steps}`);
  await DBOS.shutdown();
  report.result(marks);
  process.exit(0);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
