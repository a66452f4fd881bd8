import type { JournalCompaction } from "../../core/compaction.js";
import type { Command } from "commander";
import type { RunInfo } from "../../engine/engine.js";
import { idArg, intArg, statusArg } from "../args.js";
import { CLI, jsonOption, note, print, printJson, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";
import { formatTime, formatWaiting, runBlock, table } from "../format.js";
import { timeline } from "../journal-format.js";
import { followRun, readJournal, type FollowOptions } from "../follow.js";
import { agentRunView } from "../../agent/transcript-view.js";
import { readRunCosts, runCostLines } from "../../agent/run-costs.js";
import { agentRunLines, spendLines, transcriptLines } from "../agent-format.js";
import type { JournalEntryView } from "../../engine/engine.js";
import { planTrees } from "../plan-format.js";
import { planViews } from "../../agent/plan-view.js";
import { UsageError } from "../errors.js";
import { cutoffArg } from "../args.js";
import { registerBulkRunCommands, runFilterQuery, type RunFilterOptions } from "./bulk-runs.js";

interface RunsOptions extends RunFilterOptions {
  stuck?: boolean;
  graceMs?: number;
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
    .option("--tag <key=value>", "only runs with this tag (repeat for several)", (value: string, all: string[] = []) => [...all, value])
    .option("--search <text>", "only runs whose id, workflow or error message contains this text (ignoring case)")
    .option("--top-level", "only top-level runs (child runs left out)")
    .option("--created-after <when>", "only runs created after this: a duration before now (2h, 7d) or a date (2026-01-31)", cutoffArg)
    .option("--created-before <when>", "only runs created before this: a duration before now or a date", cutoffArg)
    .option("--limit <n>", "at most this many runs (1-1000)", intArg(1, 1000), 50)
    .option("--cursor <cursor>", "continue from the previous page's cursor")
    .option("--stuck", "only non-terminal runs that nothing will move (no live lease, no armed timer, no open wait, or runnable but unclaimed past --grace-ms)")
    .option("--grace-ms <ms>", "with --stuck: how long a runnable run may go unclaimed (default 60000)", intArg(0, 86_400_000));
  // Without it, a mistyped subcommand (`runs cancle`) reads as stray arguments of the list.
  runs
    .argument("[subcommand...]")
    .addHelpText(
      "after",
      `\nBulk actions on the runs these filters select (listed first; --yes acts; each audited):\n  ${CLI} runs cancel --workflow research --status suspended --yes\n  ${CLI} runs retry --workflow research --created-after 2h --yes`,
    );
  storeOption(jsonOption(runs)).action((stray: string[], options: RunsOptions) => {
    if (stray.length > 0)
      throw new UsageError(`Unknown subcommand "${stray[0]}" of runs: use cancel or retry (with the listing's filters), or none to list runs.`);
    return listRuns(options);
  });
  registerBulkRunCommands(runs);

  const workers = program
    .command("workers")
    .description("list live workers: id, host, pid, runs held, last heartbeat")
    .option("--stale-ms <ms>", "hide workers silent for longer than this (default 60000)", intArg(1, 86_400_000));
  storeOption(jsonOption(workers)).action(listWorkers);

  const show = program
    .command("show")
    .description("show a run's status and its journal as a timeline")
    .argument("<runId>", "the run to show", idArg("run id"))
    .option("--follow", "keep printing new journal entries until the run finishes");
  storeOption(jsonOption(show)).action(showRun);
}

interface WorkersOptions extends StoreOptions, JsonOptions {
  staleMs?: number;
}

async function listWorkers(options: WorkersOptions): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const workers = await engine.listWorkers(options.staleMs === undefined ? {} : { staleAfterMs: options.staleMs });
    if (options.json) return printJson(workers);
    if (workers.length === 0) return print(`No live workers. Start one with: ${CLI} worker --workflows <module>`);
    print(
      ...table(workers, [
        { header: "worker", cell: (w) => w.workerId },
        { header: "host", cell: (w) => w.host },
        { header: "pid", cell: (w) => String(w.pid) },
        { header: "runs held", cell: (w) => String(w.runsHeld) },
        { header: "last heartbeat", cell: (w) => formatTime(new Date(w.heartbeatAt)) },
        { header: "workflows", cell: (w) => w.workflows.join(", ") },
      ]),
    );
  });
}

async function listRuns(options: RunsOptions): Promise<void> {
  if (options.stuck) return listStuck(options);
  await withEngine(options, [], async (engine) => {
    const page = await engine.listRuns({
      ...runFilterQuery(options, Date.now()),
      limit: options.limit,
      ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
    });
    if (options.json) {
      printJson(page.runs);
      if (page.nextCursor) note(`more runs: add --cursor ${page.nextCursor}`);
      return;
    }
    if (page.runs.length === 0) {
      print(
        options.status ||
          options.workflow ||
          options.search ||
          options.tag ||
          options.topLevel ||
          options.createdAfter ||
          options.createdBefore ||
          options.cursor
          ? "No runs match."
          : `No runs yet. Start one with: ${CLI} start <workflow> --input '<json>'`,
      );
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

async function listStuck(options: RunsOptions): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const stuck = await engine.listStuckRuns({ limit: options.limit, ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }) });
    if (options.json) return printJson(stuck);
    if (stuck.length === 0) return print("No stuck runs.");
    print(
      ...table<RunInfo>(stuck, [
        { header: "run", cell: (r) => r.runId },
        { header: "workflow", cell: (r) => `${r.workflow}@${r.version}` },
        { header: "status", cell: (r) => r.status },
        { header: "updated", cell: (r) => formatTime(r.updatedAt) },
        { header: "lease", cell: (r) => (r.leaseOwner ? `${r.leaseOwner} until ${formatTime(r.leaseExpiresAt!)}` : "-") },
      ]),
    );
  });
}

async function showRun(runId: string, options: ShowOptions): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const run = await engine.getRun(runId);
    if (options.json) {
      const journal = await readJournal(engine, runId);
      const compaction = await engine.getCompaction(runId);
      printJson({
        run,
        journal,
        plans: planViews(journal).map((view) => view.state),
        costs: await readRunCosts(engine, runId, Date.now()),
        ...(compaction ? { compaction } : {}),
      });
      return;
    }
    print(...runBlock(run), "");
    if (!options.follow) {
      const journal = await readJournal(engine, runId);
      const compaction = await engine.getCompaction(runId);
      if (compaction) print(compactionLine(compaction), "");
      const agent = agentRunView(journal);
      if (agent.isAgent) print(...agentRunLines(agent), "", "Journal");
      const plans = planTrees(planViews(journal));
      if (plans.length > 0) print(...plans, "");
      print(...timeline(journal));
      print("", "Costs", ...runCostLines(await readRunCosts(engine, runId, Date.now())).map((line) => `  ${line}`));
      return;
    }
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once("SIGINT", onSignal).once("SIGTERM", onSignal);
    try {
      const last = await followRun(engine, runId, { signal: stop.signal, ...agentFollower() });
      if (!stop.signal.aborted) print("", `run ${last.runId} ${last.status}`);
    } finally {
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
    }
  });
}

/**
 * What `show --follow` prints as the journal grows: timeline lines, until the run turns out to be an
 * agent run; from then on its transcript as it grows, and its spend whenever it changes.
 */
function agentFollower(): Pick<FollowOptions, "onLine" | "onRun"> {
  const entries: JournalEntryView[] = [];
  let printedItems = 0;
  let printedSpend = "";
  const flush = () => {
    const view = agentRunView(entries);
    if (!view.isAgent) return false;
    if (printedItems === 0 && view.items.length > 0) print("Transcript");
    for (const item of view.items.slice(printedItems)) print(...transcriptLines(item).map((line) => `  ${line}`));
    printedItems = view.items.length;
    const spend = spendLines(view.spend).join("\n");
    if (spend !== printedSpend) {
      printedSpend = spend;
      print(
        "  spend: " +
          spendLines(view.spend)
            .map((line) => line.replace(/\s+/g, " "))
            .join(" · "),
      );
    }
    return true;
  };
  return {
    onLine: (line, entry) => {
      entries.push(entry);
      if (!flush()) print(line);
    },
  };
}

/** The line `cairn show` prints for a compacted run, so the timeline's gaps are explained. */
function compactionLine(compaction: JournalCompaction): string {
  return `${compaction.entries} journal entries compacted (superseded by loop checkpoints, before seq ${compaction.coveredSeq}, ${compaction.bytes} bytes)`;
}
