import type { Command } from "commander";
import { idArg, jsonArg, durationArg, isoDateArg } from "../args.js";
import { CLI, jsonOption, note, print, printJson, shellQuote, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";
import { pickWorkflow, resolveWorkflows } from "../load-workflows.js";
import { defaultStoreUrl } from "../../store/open-store.js";
import { parseTagFilters } from "../../core/tags.js";
import type { StartOptions } from "../../engine/engine.js";

interface StartCommandOptions extends StoreOptions, JsonOptions {
  input?: unknown;
  runId?: string;
  workflows?: string[];
  wait?: boolean;
  timeout?: number;
  tag?: string[];
  deadline?: number;
  delay?: number;
  startAt?: Date;
}

/** Registers `cairn start`. */
export function registerStartCommand(program: Command): void {
  const start = program
    .command("start")
    .description("start a run of a workflow (idempotent by --run-id)")
    .argument("<workflow>", "the workflow's name", idArg("workflow name"))
    .option("--input <json>", "the run's input as JSON", jsonArg)
    .option("--run-id <id>", "choose the run id (e.g. a thread id); starting again with the same id and input returns the same run", idArg("run id"))
    .option("--workflows <module...>", "ES module(s) exporting the workflow (default: the examples)")
    .option("--tag <key=value>", "tag the run (repeat for several); children inherit tags", (value: string, all: string[] = []) => [...all, value])
    .option("--deadline <duration>", "cancel the run (compensating) when this long has passed since its start, e.g. 2h or 7d", durationArg)
    .option("--delay <duration>", "start the run after this long, e.g. 10m (a durable timer)", durationArg)
    .option("--start-at <date>", "start the run at this time, e.g. 2026-12-01T09:00:00Z (a durable timer)", isoDateArg)
    .option("--wait", "wait for the run to finish and print its output (a worker must be running)")
    .option("--timeout <duration>", "with --wait: give up after this long, e.g. 30s or 10m", durationArg)
    .addHelpText(
      "after",
      `\nExamples:\n  ${CLI} start research --input '{"topic":"solid-state batteries"}' --run-id thread-42\n  ${CLI} start research --tag customer=acme --deadline 2h --delay 10m`,
    );
  storeOption(jsonOption(start)).action(startRun);
}

async function startRun(name: string, options: StartCommandOptions): Promise<void> {
  const workflows = await resolveWorkflows(options.workflows);
  const workflow = pickWorkflow(workflows, name);
  await withEngine(
    options,
    workflows,
    async (engine, cli) => {
      const handle = await engine.start(workflow, options.input, startOptions(options));
      const runId = handle.runId;
      await cli.audit("run.start", runId, { workflow: workflow.name, created: handle.created });
      if (!options.json) {
        print(runId);
        note(handle.created ? `Started ${workflow.name}@${workflow.version} as ${runId}.` : `Run ${runId} already existed; nothing new was started.`);
      }
      if (!options.wait) {
        if (options.json) printJson({ runId, created: handle.created, workflow: workflow.name, version: workflow.version });
        else {
          const { store, worker } = followUps(options);
          note(`Follow it with: ${CLI} show ${shellQuote(runId)} --follow${store}`, `A worker runs it: ${CLI} worker${worker}`);
        }
        return;
      }
      if (!options.json) note(`Waiting for ${runId} to finish (runs only while a worker is running: ${CLI} worker${followUps(options).worker})…`);
      const output = await handle.result(options.timeout === undefined ? undefined : { timeoutMs: options.timeout });
      if (options.json) printJson({ runId, created: handle.created, workflow: workflow.name, version: workflow.version, status: "completed", output });
      else print(JSON.stringify(output, null, 2) ?? "undefined");
    },
    { create: true },
  );
}

/** The engine's start options from the command line's; the engine checks them together (e.g. not `--delay` with `--start-at`). */
function startOptions(options: StartCommandOptions): StartOptions | undefined {
  const start: StartOptions = {};
  if (options.runId !== undefined) start.runId = options.runId;
  if (options.tag) start.tags = parseTagFilters(options.tag, "=", "--tag");
  if (options.deadline !== undefined) start.deadline = options.deadline;
  if (options.delay !== undefined) start.delay = options.delay;
  if (options.startAt !== undefined) start.startAt = options.startAt;
  return Object.keys(start).length > 0 ? start : undefined;
}

/**
 * The `--store` and `--workflows` the follow-up commands need to reach the same run with the same
 * code, quoted for a shell (empty when the defaults apply), so they work as printed.
 */
function followUps(options: StartCommandOptions): { store: string; worker: string } {
  const store = options.store !== undefined && options.store !== defaultStoreUrl() ? ` --store ${shellQuote(options.store)}` : "";
  const workflows = options.workflows && options.workflows.length > 0 ? ` --workflows ${options.workflows.map(shellQuote).join(" ")}` : "";
  return { store, worker: `${store}${workflows}` };
}
