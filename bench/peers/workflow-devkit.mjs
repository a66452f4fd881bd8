// Vercel's Workflow DevKit (the `workflow` package, @workflow/core) with its local world
// (@workflow/world-local), the same work as Cairn's cases: a workflow of 10 steps, each `total + 1`,
// written with the DevKit's "use workflow" / "use step" directives (bench/peers/workflow-devkit/workflows.mjs).
//
// The directives need the DevKit's build: this process copies the workflow file into a fresh temp
// dir (with a node_modules link to bench/node_modules) and builds it there with @workflow/builders'
// StandaloneBuilder, what `workflow build` runs (esbuild + @swc/core with the DevKit's SWC plugin,
// a .wasm file from the registry): a steps bundle and a workflow bundle, each exporting the POST
// handler a framework would mount at /.well-known/workflow/v1/{step,flow}. The local world keeps its
// state in JSON files in the temp dir (removed at exit) and delivers its queue messages to those
// handlers, by default in process (LocalWorld.registerHandler, "bypassing HTTP"), or with
// BENCH_WDK_TRANSPORT=http over HTTP to the node:http server on 127.0.0.1 that mounts them here,
// as a framework's dev server would.
//
//   node bench/peers/workflow-devkit.mjs throughput   10-step workflows: start() then the run's returnValue;
//                                                     BENCH_CONCURRENCY, BENCH_REPS, BENCH_TARGET_SEC
//   node bench/peers/workflow-devkit.mjs run <n>      n sequential workflows, then exits (for strace)
//
// Waiting for a result: Run.returnValue polls the run every 1 s until it completed, which would
// measure the poll interval. This driver shares the world object with the runtime (same process), so
// it wakes on the runtime's own run_completed event write and then reads the result through
// run.returnValue (one read, the run being completed): no polling, the peer's most favourable wait.
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exitWithParent, report } from "../lib/child.mjs";
import { settingsFromEnv, throughputLoop } from "./loop.mjs";

exitWithParent();

const BENCH_DIR = fileURLToPath(new URL("..", import.meta.url));
const mode = process.argv[2];
const transport = process.env.BENCH_WDK_TRANSPORT ?? "direct";
const settings = settingsFromEnv();
const version = (name) => JSON.parse(readFileSync(join(BENCH_DIR, "node_modules", name, "package.json"), "utf8")).version;

// Everything lives in one temp dir, removed before the result is reported (the parent SIGKILLs the
// child as soon as it has the result) and otherwise at exit.
const dir = mkdtempSync(join(tmpdir(), "cairn-bench-wdk-"));
const cleanup = () => rmSync(dir, { recursive: true, force: true });
process.on("exit", cleanup);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(1));

// The DevKit's builder and runtime log to stdout; the parent reads stdout lines, so keep them on stderr.
console.log = (...args) => console.error(...args);
console.info = console.log;

/** Builds the workflow file in `dir`: { flow, steps } (the bundles' exports), buildMs. */
async function build() {
  const t0 = performance.now();
  cpSync(join(BENCH_DIR, "peers", "workflow-devkit", "workflows.mjs"), join(dir, "workflows.mjs"));
  cpSync(join(BENCH_DIR, "package.json"), join(dir, "package.json"));
  symlinkSync(join(BENCH_DIR, "node_modules"), join(dir, "node_modules"), "dir");
  const { StandaloneBuilder } = await import("@workflow/builders");
  // SWC caches the compiled plugin under the working directory's .swc: keep that in the temp dir too.
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    await new StandaloneBuilder({
      buildTarget: "standalone",
      workingDir: dir,
      dirs: ["."],
      stepsBundlePath: "out/steps.cjs",
      workflowsBundlePath: "out/flow.cjs",
      webhookBundlePath: "out/webhook.cjs",
    }).build();
  } finally {
    process.chdir(cwd);
  }
  const require = createRequire(join(dir, "index.js"));
  return { flow: require("./out/flow.cjs"), steps: require("./out/steps.cjs"), buildMs: performance.now() - t0 };
}

/** A node:http server on 127.0.0.1 mounting the two handlers where a framework would. */
async function serve(handlers) {
  const routes = { "/.well-known/workflow/v1/flow": handlers.flow.POST, "/.well-known/workflow/v1/step": handlers.steps.POST };
  const server = createServer(async (req, res) => {
    const handler = routes[req.url.split("?")[0]];
    if (!handler) return res.writeHead(404).end();
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = req.method === "GET" || req.method === "HEAD" ? undefined : Buffer.concat(chunks);
    const response = await handler(new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers: req.headers, body }));
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return server;
}

const handlers = await build();
const { createLocalWorld } = await import("@workflow/world-local");
const { setWorld } = await import("workflow/runtime");
const { start } = await import("workflow/api");
// The process listens, as the dev server the DevKit expects: the runtime looks up its own port (for
// the workflow's base URL) on every replay and step until it finds one, then caches it; with no
// listening socket that lookup (process.report.getReport()) would run on every invocation.
const server = await serve(handlers);
const world = createLocalWorld({ dataDir: join(dir, "data"), recoverActiveRuns: false, baseUrl: `http://127.0.0.1:${server.address().port}` });
setWorld(world);
await world.start();
if (transport === "direct") {
  world.registerHandler("__wkf_workflow_", handlers.flow.POST);
  world.registerHandler("__wkf_step_", handlers.steps.POST);
}

// Wake the waiting driver when the runtime writes a run's terminal event.
const waiters = new Map();
const createEvent = world.events.create.bind(world.events);
world.events.create = async (runId, event, ...rest) => {
  const out = await createEvent(runId, event, ...rest);
  if (event?.eventType === "run_completed" || event?.eventType === "run_failed" || event?.eventType === "run_cancelled") waiters.get(runId)?.();
  return out;
};

const tenSteps = { workflowId: "workflow//./workflows//tenSteps" };

/** Starts one workflow and resolves with its result once it completed. */
async function runOne() {
  const run = await start(tenSteps, []);
  const ended = new Promise((resolve) => waiters.set(run.runId, resolve));
  try {
    if ((await run.status) !== "completed") await ended;
    return await run.returnValue;
  } finally {
    waiters.delete(run.runId);
  }
}

const describe = {
  versions: { workflow: version("workflow"), "@workflow/core": version("@workflow/core"), "@workflow/world-local": version("@workflow/world-local"), "@workflow/builders": version("@workflow/builders") },
  transport,
  buildMs: handlers.buildMs,
};

if (mode === "throughput") {
  // CPU time per step over the whole case (warm-up included): the one process holds the runtime,
  // the world and the driver.
  let workflows = 0;
  const before = process.cpuUsage();
  const out = await throughputLoop(
    async (id) => {
      const total = await runOne();
      if (total !== 10) throw new Error(`workflow ${id} returned ${total}, not 10`);
      workflows += 1;
    },
    { ...settings, steps: 10 },
  );
  const cpu = process.cpuUsage(before);
  await world.close();
  server.close();
  cleanup();
  report.result({ ...out, ...describe, cpuPerStepUs: { process: (cpu.user + cpu.system) / (workflows * 10) } });
  process.exit(0);
} else if (mode === "run") {
  const n = Number(process.argv[3] ?? 20);
  process.stdout.write(`ready ${dir}\n`);
  for (let i = 0; i < n; i++) if ((await runOne()) !== 10) throw new Error("a workflow did not return 10");
  await world.close();
  server.close();
  cleanup();
  report.result({ workflows: n, ...describe });
  process.exit(0);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
