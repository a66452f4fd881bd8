import type { Command } from "commander";
import type { RunStatus } from "../../core/run.js";
import type { RunInfo } from "../../engine/engine.js";
import { idArg, intArg, statusArg } from "../args.js";
import { CLI, jsonOption, note, print, printJson, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";
import { formatTime, formatWaiting, runBlock, table, timeline } from "../format.js";
import { followRun, readJournal } from "../follow.js";

interface RunsOptions extends StoreOptions, JsonOptions {
  status?: RunStatus[];
  workflow?: string;
  limit: number;
  cursor?: string;
}

interface ShowOptions extends StoreOptions, JsonOptions {
  follow?: boolean;
}

/** Registers `cairn runs` and `cairn show`. */
export function registerRunCommands(program: Command): void {
  const runs = program
    .command("runs")
    .description("list runs, newest first")
    .option("--status <status>", "only runs with this status (comma-separated for several)", statusArg)
    .option("--workflow <name>", "only runs of this workflow")
    .option("--limit <n>", "at most this many runs (1-1000)", intArg(1, 1000), 50)
    .option("--cursor <cursor>", "continue from the previous page's cursor");
  storeOption(jsonOption(runs)).action(listRuns);

  const show = program
    .command("show")
    .description("show a run's status and its journal as a timeline")
    .argument("<runId>", "the run to show", idArg("run id"))
    .option("--follow", "keep printing new journal entries until the run finishes");
  storeOption(jsonOption(show)).action(showRun);
}

async function listRuns(options: RunsOptions): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const page = await engine.listRuns({ status: options.status, workflow: options.workflow, limit: options.limit, cursor: options.cursor });
    if (options.json) {
      printJson(page.runs);
      if (page.nextCursor) note(`more runs: add --cursor ${page.nextCursor}`);
      return;
    }
    if (page.runs.length === 0) {
      print(options.status || options.workflow || options.cursor ? "No runs match." : `No runs yet. Start one with: ${CLI} start <workflow> --input '<json>'`);
      return;
    }
    const now = Date.now();
    print(
      ...table<RunInfo>(page.runs, [
        { header: "run", cell: (r) => r.runId },
        { header: "workflow", cell: (r) => `${r.workflow}@${r.version}` },
        { header: "status", cell: (r) => r.status },
        { header: "created", cell: (r) => formatTime(r.createdAt) },
        { header: "updated", cell: (r) => formatTime(r.updatedAt) },
        { header: "waiting for", cell: (r) => (r.status === "suspended" ? formatWaiting(r.waitingFor, now) : "-") },
      ]),
    );
    if (page.nextCursor) print("", `More runs: ${CLI} runs --cursor ${page.nextCursor}`);
  });
}

async function showRun(runId: string, options: ShowOptions): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const run = await engine.getRun(runId);
    if (options.json) {
      printJson({ run, journal: await readJournal(engine, runId) });
      return;
    }
    print(...runBlock(run), "");
    if (!options.follow) {
      print(...timeline(await readJournal(engine, runId)));
      return;
    }
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
    try {
      const last = await followRun(engine, runId, { signal: stop.signal, onLine: (line) => print(line) });
      if (!stop.signal.aborted) print("", `run ${last.runId} ${last.status}`);
    } finally {
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    }
  });
}
