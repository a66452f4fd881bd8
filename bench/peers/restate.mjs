// Restate (its TypeScript SDK, @restatedev/restate-sdk), the same work as Cairn's cases: a Restate
// workflow whose handler runs trivial steps, each a ctx.run (a journaled durable step: the SDK
// waits for the server to acknowledge the entry before the handler goes on). The server is started
// by the parent case (bench/lib/restate-server.mjs); this process serves the SDK endpoint over
// HTTP/2 (bidirectional streaming, as restate.serve does) on 127.0.0.1, registers it with the
// server's admin API and drives workflows through the server's ingress over HTTP:
//   node bench/peers/restate.mjs throughput   10-step workflows (POST /BenchTen/<id>/run, which returns the
//                                             result); BENCH_CONCURRENCY, BENCH_REPS, BENCH_TARGET_SEC
//   node bench/peers/restate.mjs crash        starts a workflow of BENCH_STEPS steps and one more (POST .../run/send);
//                                             prints "inflight" once that last step is running, then hangs (to be SIGKILLed)
//   node bench/peers/restate.mjs recover      serves the endpoint again on the same port; the server retries the
//                                             crashed invocation there (its retry policy); prints when the attempt
//                                             arrived, when the handler restarted, when the last step was entered, and completion
// BENCH_RESTATE_INGRESS / BENCH_RESTATE_ADMIN are the server's URLs, BENCH_RESTATE_PORT the endpoint's port
// (0: any free one), BENCH_WORKFLOW_ID the crashed workflow's key.
import { readFileSync } from "node:fs";
import { createServer } from "node:http2";
import { exitWithParent, report } from "../lib/child.mjs";
import { settingsFromEnv, throughputLoop } from "./loop.mjs";

exitWithParent();

// The SDK calls Promise.withResolvers (Node ≥ 22); this bench runs on Node ≥ 20.19, so it is
// provided here with the standard semantics before the SDK is loaded.
if (typeof Promise.withResolvers !== "function") {
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}
process.env.RESTATE_LOGGING ??= "ERROR";
const restate = await import("@restatedev/restate-sdk");

const mode = process.argv[2];
const now = () => performance.timeOrigin + performance.now();
const marks = { processStarted: performance.timeOrigin };
let afterStep = async () => null;
let started = () => {};
const ingress = process.env.BENCH_RESTATE_INGRESS;
const settings = settingsFromEnv();

const tenSteps = restate.workflow({
  name: "BenchTen",
  handlers: {
    run: async (ctx) => {
      let total = 0;
      for (let i = 0; i < 10; i++) total = await ctx.run("s", async () => total + 1);
      return total;
    },
  },
});

const resumeSteps = restate.workflow({
  name: "BenchResume",
  handlers: {
    run: async (ctx, steps) => {
      started();
      let total = 0;
      for (let i = 0; i < steps; i++) total = await ctx.run("s", async () => total + 1);
      await ctx.run("after", () => afterStep());
      return total;
    },
  },
});

// The endpoint, with the arrival of each invocation attempt noted (the recovery's "claim").
const handler = restate.createEndpointHandler({ services: [tenSteps, resumeSteps] });
const server = createServer((request, response) => {
  if (request.url.includes("/invoke/BenchResume/")) marks.attemptArrived ??= now();
  handler(request, response);
});
const port = await new Promise((resolve, reject) => {
  server.once("error", reject);
  server.listen(Number(process.env.BENCH_RESTATE_PORT ?? 0), "127.0.0.1", () => resolve(server.address().port));
});
marks.listening = now();

/** The server's user + system CPU time in µs (Linux /proc, clock ticks of 10 ms), or null. */
function serverCpuUs() {
  try {
    const fields = readFileSync(`/proc/${process.env.BENCH_RESTATE_SERVER_PID}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

/** POSTs to the ingress; the response's text (a workflow's JSON result), or throws naming the status. */
async function call(path, body) {
  const response = await fetch(`${ingress}${path}`, {
    method: "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${text}`);
  return text;
}

/** Registers this endpoint, then waits until the ingress routes to it (schema changes propagate). */
async function register() {
  const response = await fetch(`${process.env.BENCH_RESTATE_ADMIN}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri: `http://127.0.0.1:${port}`, force: true }),
  });
  if (!response.ok) throw new Error(`registering http://127.0.0.1:${port}: ${response.status} ${await response.text()}`);
  const deadline = Date.now() + 30_000;
  for (let i = 0; ; i++) {
    try {
      if ((await call(`/BenchTen/${process.pid}-ready-${i}/run`)) === "10") return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`the ingress does not route to the new deployment after 30 s: ${error.message}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

if (mode === "throughput") {
  await register();
  // CPU time per step, over the whole case (warm-up included): this process (SDK endpoint and the
  // HTTP clients) and the server (/proc/<pid>/stat), a figure the machine's load does not change much.
  let workflows = 0;
  const sdkBefore = process.cpuUsage();
  const serverBefore = serverCpuUs();
  const out = await throughputLoop(
    async (id) => {
      const total = await call(`/BenchTen/${process.pid}-${id}/run`);
      if (total !== "10") throw new Error(`workflow ${id} returned ${total}, not 10`);
      workflows += 1;
    },
    { ...settings, steps: 10 },
  );
  const sdk = process.cpuUsage(sdkBefore);
  const serverAfter = serverCpuUs();
  server.close();
  const cpuPerStepUs = {
    sdkProcess: (sdk.user + sdk.system) / (workflows * 10),
    server: serverBefore === null || serverAfter === null ? null : (serverAfter - serverBefore) / (workflows * 10),
  };
  report.result({ ...out, cpuPerStepUs });
  process.exit(0);
} else if (mode === "crash") {
  afterStep = () => {
    process.stdout.write("inflight\n");
    return new Promise(() => {});
  };
  await register();
  await call(`/BenchResume/${process.env.BENCH_WORKFLOW_ID}/run/send`, settings.steps);
  setInterval(() => {}, 60_000);
} else if (mode === "recover") {
  started = () => {
    marks.workflowStarted ??= now();
  };
  afterStep = async () => {
    marks.entered ??= now();
    return null;
  };
  // Attach to the workflow's result (GET waits for it); the server retries the invocation here meanwhile.
  const response = await fetch(`${ingress}/restate/workflow/BenchResume/${process.env.BENCH_WORKFLOW_ID}/attach`);
  const text = await response.text();
  marks.done = now();
  if (!response.ok || Number(text) !== settings.steps) throw new Error(`the recovered workflow returned ${response.status} ${text}, not ${settings.steps}`);
  server.close();
  report.result(marks);
  process.exit(0);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(2);
}
