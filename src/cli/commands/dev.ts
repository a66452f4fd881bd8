import type { Command } from "commander";
import { modelFromEnv } from "../../agent/model/from-env.js";
import { isTerminal } from "../../core/run.js";
import { createHostingEngine } from "../command-engine.js";
import type { Engine, RunInfo } from "../../engine/engine.js";
import type { Workflow } from "../../engine/workflow.js";
import { builtDashboardDir } from "../../server/dashboard.js";
import { serve, type RunningServer } from "../../server/serve.js";
import { intArg } from "../args.js";
import { defaultStoreUrl } from "../../store/open-store.js";
import { CLI, defined, print, shellQuote, storeOption, type StoreOptions } from "../context.js";
import { followRun } from "../follow.js";
import { formatError, preview } from "../format.js";
import { untilShutdown } from "../lifecycle.js";
import { describeWorkflows, resolveWorkflows } from "../load-workflows.js";
import { maxRecoveryOption } from "../load-schedules.js";
import { dashboardLine } from "./serve.js";
import { startAlertEvaluator, type AlertEvaluator } from "../../server/alerts/evaluator.js";

interface DevOptions extends StoreOptions {
  banner: boolean;
  demo: boolean;
  topic: string;
  workflows?: string[];
  concurrency?: number;
  port: number;
  dashboard: boolean;
  maxRecoveryAttempts?: number;
}

/** Registers `cairn dev`: what `npm start` runs. */
export function registerDevCommand(program: Command): void {
  const dev = program
    .command("dev")
    .description("run a local worker with the example workflows, start a demo research run and print its journal live")
    .option("--no-banner", "do not print the getting-started commands")
    .option("--no-demo", "do not start the demo research run")
    .option("--topic <text>", "topic of the demo research run", "solid-state batteries")
    .option("--workflows <module...>", "ES module(s) exporting workflows (default: the examples)")
    .option("--concurrency <n>", "runs held at once (default 16)", intArg(1, 10_000))
    .option("--port <n>", "port of the dashboard and API on 127.0.0.1 (a free one if it is taken); 0 picks a free one", intArg(0, 65_535), 4000)
    .option("--no-dashboard", "do not serve the dashboard and the HTTP API");
  storeOption(maxRecoveryOption(dev)).action(runDev);
}

async function runDev(options: DevOptions): Promise<void> {
  const workflows = await resolveWorkflows(options.workflows);
  const shutdown = untilShutdown("stopping: in-flight steps finish, then the store is closed");
  const engine = await createHostingEngine(options, workflows);
  const stopFollowing = new AbortController();
  let alerts: AlertEvaluator | undefined;
  try {
    const worker = engine.startWorker(defined({ concurrency: options.concurrency }));
    const server = options.dashboard ? await serveDashboard(engine, options.port) : undefined;
    if (server) print(`Cairn ${dashboardLine(server.url, true, server.dashboardDir)} · HTTP API ${server.url}`);
    // The stored alert rules (POST /alerts/rules) are evaluated here too, as by `cairn serve`.
    alerts = server ? startAlertEvaluator(engine.store) : undefined;
    // The commands the banner and hints suggest must reach this store, not the default one.
    const flags = options.store === defaultStoreUrl() ? "" : ` --store ${shellQuote(options.store)}`;
    const research = workflows.find((workflow) => workflow.name === "research");
    if (options.banner) banner(engine, worker.workerId, workflows, flags, research ? undefined : options.workflows);
    const demo = options.demo && research ? runDemo(engine, research, options.topic, flags, stopFollowing.signal) : undefined;
    if (options.demo && !research) print(`No "research" workflow is loaded, so no demo run was started.`);
    await shutdown;
    stopFollowing.abort();
    await demo;
    await server?.close();
    await alerts?.stop();
    await worker.stop({ drain: true });
  } finally {
    stopFollowing.abort();
    await alerts?.stop();
    await engine.close();
  }
}

/** The API and the dashboard on loopback; when the port is taken (another `cairn dev`), on a free one. */
async function serveDashboard(engine: Engine, port: number): Promise<RunningServer & { dashboardDir: string | undefined }> {
  const dashboardDir = builtDashboardDir();
  const options = defined({ host: "127.0.0.1", dashboardDir });
  try {
    return { ...(await serve(engine, { ...options, port })), dashboardDir };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || port === 0) throw error;
    return { ...(await serve(engine, { ...options, port: 0 })), dashboardDir };
  }
}

function banner(engine: Engine, workerId: string, workflows: Workflow<any, any>[], flags: string, modules: string[] | undefined): void {
  // With the examples loaded, the research agent is the thing to try; with the user's own modules, their first workflow.
  const first = workflows[0]?.name ?? "<workflow>";
  const start = modules
    ? `${CLI} start ${shellQuote(first)} --workflows ${modules.map(shellQuote).join(" ")} --input '<json>'${flags}`
    : `${CLI} start research --input '{"topic":"tidal energy"}'${flags}`;
  print(
    `Cairn dev: worker ${workerId} is running.`,
    `  store      ${engine.store.url}`,
    `  workflows  ${describeWorkflows(workflows)}`,
    ...(modules ? [] : [`  model      ${describeModel()}`]),
    "",
    "In another terminal:",
    ...aligned([
      [start, "prints the new run's id"],
      [`${CLI} runs${flags}`, "every run and what it waits for"],
      [`${CLI} show <runId> --follow${flags}`, "a run's journal as a timeline"],
      [`${CLI} human-requests${flags}`, `questions runs wait on${modules ? "" : " (the research review)"}`],
      [`${CLI} answer <requestId> <option>${flags}`, `answer one${modules ? "" : `; e.g. approve, or: revise --message "<notes>"`}`],
    ]),
    "",
    "Ctrl-C stops the worker; runs stay in the store and resume with the next worker.",
    "",
  );
}

/** `command   # comment` lines with the comments in one column. */
function aligned(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([command]) => command.length));
  return rows.map(([command, comment]) => `  ${command.padEnd(width)}   # ${comment}`);
}

/** The model the example agents use: a real one when a provider key is set, else the scripted one. */
function describeModel(): string {
  try {
    const model = modelFromEnv();
    if (model) return `${model.provider}:${model.modelId} (from the environment)`;
  } catch (error) {
    return `scripted (${(error as Error).message})`;
  }
  return "scripted stand-in (set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real one)";
}

/** Starts one research run and prints its journal as it grows, with a hint for each wait. */
async function runDemo(engine: Engine, research: Workflow<any, any>, topic: string, flags: string, signal: AbortSignal): Promise<void> {
  const runId = `research-demo-${stamp(new Date())}`;
  try {
    await engine.start(research, { topic }, { runId });
    print(`Started demo run ${runId} (research on "${topic}"). Its journal, live:`, "");
    const last = await followRun(engine, runId, { signal, onLine: (line) => print(line), onRun: (run) => hints(engine, run, flags) });
    if (isTerminal(last.status)) print("", `The demo run is ${last.status}. The worker keeps running; Ctrl-C to stop.`);
  } catch (error) {
    if (!signal.aborted) print(`The demo run could not be followed: ${(error as Error).message}`);
  }
}

async function hints(engine: Engine, run: RunInfo, flags: string): Promise<void> {
  const id = shellQuote(run.runId);
  if (run.status === "suspended") {
    for (const wait of run.waitingFor) {
      if (wait.kind === "event") {
        const payload = wait.type === "review" ? `'{"approved":true}'` : `'<json>'`;
        print(
          "",
          `  ⏸  The run now waits for a "${wait.type}" event (it costs nothing while it waits). From another terminal:`,
          `       ${CLI} send ${id} ${shellQuote(wait.type)} ${payload}${flags}`,
          "",
        );
      } else if (wait.kind === "human") {
        const requests = await engine.listHumanRequests({ status: "pending", runId: run.runId }).catch(() => []);
        const request = requests.find((r) => r.requestId === wait.requestId);
        const options = request?.options ?? [];
        const id = shellQuote(wait.requestId);
        print(
          "",
          `  ⏸  The run waits for a person (it costs nothing while it waits)${request ? `: ${request.question}` : ""}`,
          `     From another terminal (\`${CLI} human-requests${flags}\` lists every question):`,
          ...(options.length > 0 ? options : ["<option>"]).map(
            (option) => `       ${CLI} answer ${id} ${shellQuote(option)}${option === "revise" ? ` --message '<notes>'` : ""}${flags}`,
          ),
          "",
        );
      }
    }
  } else if (run.status === "completed") {
    print("", `  ✔  Output: ${preview(run.output, 200)}`, `     Inspect it: ${CLI} show ${id}${flags}`);
  } else if (run.status === "failed") {
    print("", `  ✘  ${formatError(run.error)}`, `     Fix the cause, then: ${CLI} retry ${id}${flags}`);
  } else if (run.status === "compensated") {
    print("", `  ↺  Compensated after: ${formatError(run.error)}`, `     Inspect it: ${CLI} show ${id}${flags}`);
  } else if (run.status === "compensation_failed") {
    print("", `  ✘  ${formatError(run.error)}`, `     Fix the compensation, then: ${CLI} retry ${id}${flags}`);
  }
}

/** `YYYYMMDD-HHMMSS`, local time. */
function stamp(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}${pad(date.getMonth() + 1)}${pad(date.getDate())}-${pad(date.getHours())}${pad(date.getMinutes())}${pad(date.getSeconds())}`;
}
