import { readFile, writeFile } from "node:fs/promises";
import type { Command } from "commander";
import type { RetentionPolicy } from "../../core/retention-schemas.js";
import type { RunStatus } from "../../core/run.js";
import { durationArg, idArg, intArg, cutoffArg, statusArg, unitDurationArg } from "../args.js";
import { UsageError } from "../errors.js";
import { CLI, defined, jsonOption, note, print, printJson, shellQuote, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";

interface PruneCommandOptions extends StoreOptions, JsonOptions {
  completedBefore: string;
  status?: RunStatus[];
  workflow?: string;
  dryRun?: boolean;
  archive?: string;
  keepSnapshots?: number;
  limit?: number;
  batchSize?: number;
}

interface CompactCommandOptions extends StoreOptions, JsonOptions {
  checkpointsBefore: string;
  run?: string;
  dryRun?: boolean;
  archive?: string;
  keepSnapshots?: number;
  limit?: number;
  batchSize?: number;
}

interface ExportCommandOptions extends StoreOptions {
  out?: string;
  force?: boolean;
}

interface ImportCommandOptions extends StoreOptions, JsonOptions {
  as?: string;
}

/** Options of `cairn worker` / `cairn serve` that set the automatic retention policy. */
export interface RetentionCommandOptions {
  retentionCompleted?: number;
  retentionFailed?: number;
  retentionCancelled?: number;
  retentionInterval?: number;
  retentionArchive?: string;
  retentionCompactLoops?: number;
  retentionKeepSnapshots?: number;
}

/** Registers `cairn prune`, `cairn export` and `cairn import`. */
export function registerRetentionCommands(program: Command): void {
  const prune = program
    .command("prune")
    .description("delete finished runs (journal, inbox, questions, search index) that finished before a cutoff; live runs are never touched")
    .requiredOption("--completed-before <cutoff>", "finished before this: a duration before now (30d, 12h) or a date (2026-01-31)", cutoffArg)
    .option("--status <list>", "terminal statuses to prune, comma-separated (default: all terminal statuses)", statusArg)
    .option("--workflow <name>", "only runs of this workflow", idArg("workflow"))
    .option("--dry-run", "list what would be deleted; change nothing")
    .option("--archive <dir>", "write each run to <dir>/<runId>.json (importable with cairn import) before deleting it")
    .option("--limit <n>", "delete at most this many runs", intArg(1))
    .option("--batch-size <n>", "runs per transaction (default 100): a huge prune never holds a long lock", intArg(1, 10_000))
    .addHelpText(
      "after",
      `\nExamples:\n  ${CLI} prune --completed-before 30d --dry-run\n  ${CLI} prune --completed-before 2026-01-01 --status failed,dead --archive ./archive`,
    );
  storeOption(jsonOption(prune)).action(pruneRuns);

  const compact = program
    .command("compact")
    .description("delete the journal entries that loop snapshots supersede (live and finished runs); resume, replay, export and fork keep working")
    .requiredOption("--checkpoints-before <cutoff>", "what loop checkpoints written before this supersede: a duration before now (1h, 0s) or a date", cutoffArg)
    .option("--run <runId>", "only this run", idArg("run id"))
    .option("--dry-run", "count what would be deleted; change nothing")
    .option("--archive <dir>", "write each run's deleted entries to <dir>/<runId>.compacted-<seq>.json first")
    .option("--keep-snapshots <n>", "leave each run's n newest loop checkpoints and what lies between them (default 1)", intArg(1, 10_000))
    .option("--limit <n>", "look at most at this many runs", intArg(1))
    .option("--batch-size <n>", "runs listed per query (default 100); each run is compacted in its own transaction", intArg(1, 10_000))
    .addHelpText("after", `\nExamples:\n  ${CLI} compact --checkpoints-before 1h --dry-run\n  ${CLI} compact --checkpoints-before 0s --run thread-42`);
  storeOption(jsonOption(compact)).action(compactRuns);

  const exportCommand = program
    .command("export")
    .description("write a run with its journal, inbox and questions to a JSON file that `cairn import` restores")
    .argument("<runId>", "the run to export", idArg("run id"))
    .option("--out <file>", "write to this file (default: stdout)")
    .option("--force", "export a live run as it is now (default: only finished runs)");
  storeOption(exportCommand).action(exportRun);

  const importCommand = program
    .command("import")
    .description("restore a run from a `cairn export` file: all or nothing, journal seqs and status as exported")
    .argument("<file>", "the export file")
    .option("--as <runId>", "import under this run id (the exported one is taken)", idArg("run id"));
  storeOption(jsonOption(importCommand)).action(importRun);
}

/** Adds the `--retention-*` options of `cairn worker` and `cairn serve`. */
export function retentionOptions(command: Command): Command {
  return command
    .option("--retention-completed <duration>", "prune completed runs this long after they finished, e.g. 30d", unitDurationArg)
    .option("--retention-failed <duration>", "prune failed and dead runs this long after they finished, e.g. 90d", unitDurationArg)
    .option("--retention-cancelled <duration>", "prune cancelled runs this long after they finished", unitDurationArg)
    .option("--retention-interval <duration>", "time between retention passes (default 1h)", durationArg)
    .option("--retention-archive <dir>", "archive each run to <dir>/<runId>.json before pruning it")
    .option("--retention-compact-loops <duration>", "compact loops: delete what loop snapshots this old supersede, e.g. 1h", durationArg)
    .option("--retention-keep-snapshots <n>", "with --retention-compact-loops: leave each run's n newest loop checkpoints (default 1)", intArg(1, 10_000));
}

/** The retention policy the `--retention-*` options describe, or undefined when none is set. */
export function retentionFrom(options: RetentionCommandOptions): RetentionPolicy | undefined {
  const policy = defined({
    completedAfter: options.retentionCompleted,
    failedAfter: options.retentionFailed,
    cancelledAfter: options.retentionCancelled,
    interval: options.retentionInterval,
    archiveDir: options.retentionArchive,
    compactLoopsAfter: options.retentionCompactLoops,
    keepSnapshots: options.retentionKeepSnapshots,
  });
  if (Object.keys(policy).length === 0) return undefined;
  if (
    policy.completedAfter === undefined &&
    policy.failedAfter === undefined &&
    policy.cancelledAfter === undefined &&
    policy.compactLoopsAfter === undefined
  ) {
    throw new UsageError(
      "--retention-interval and --retention-archive need a policy: add --retention-completed, --retention-failed, --retention-cancelled or --retention-compact-loops.",
    );
  }
  return policy;
}

async function pruneRuns(options: PruneCommandOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    const result = await engine.prune(
      defined({
        finishedBefore: options.completedBefore.trim(),
        statuses: options.status,
        workflow: options.workflow,
        dryRun: options.dryRun ?? false,
        archiveDir: options.archive,
        limit: options.limit,
        batchSize: options.batchSize,
      }) as Parameters<typeof engine.prune>[0],
    );
    if (!result.dryRun) {
      await cli.audit("run.prune", null, {
        completedBefore: options.completedBefore,
        statuses: options.status ?? null,
        workflow: options.workflow ?? null,
        count: result.runIds.length,
        archive: options.archive ?? null,
      });
    }
    if (options.json) return printJson(result);
    if (result.dryRun) {
      print(...result.runIds);
      note(`${result.runIds.length} run(s) would be deleted (dry run: nothing changed).`);
      return;
    }
    print(
      `Deleted ${result.runIds.length} run(s)${options.archive ? `, archived to ${options.archive}` : ""}.` +
        (result.skipped > 0 ? ` ${result.skipped} changed while pruning (e.g. retried) and were kept.` : ""),
    );
  });
}

async function compactRuns(options: CompactCommandOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    const result = await engine.compact(
      defined({
        checkpointBefore: options.checkpointsBefore.trim(),
        runId: options.run,
        dryRun: options.dryRun ?? false,
        archiveDir: options.archive,
        keepSnapshots: options.keepSnapshots,
        limit: options.limit,
        batchSize: options.batchSize,
      }) as Parameters<typeof engine.compact>[0],
    );
    if (!result.dryRun) {
      await cli.audit("run.compact", options.run ?? null, {
        checkpointsBefore: options.checkpointsBefore,
        runs: result.runIds.length,
        entries: result.entries,
      });
    }
    if (options.json) return printJson(result);
    const what = `${result.entries} journal entr${result.entries === 1 ? "y" : "ies"} (${result.bytes} bytes) of ${result.runIds.length} run(s)`;
    if (result.dryRun) {
      print(...result.runIds);
      note(`${what} would be deleted (dry run: nothing changed).`);
      return;
    }
    print(`Compacted ${what}${options.archive ? `, archived to ${options.archive}` : ""}.`);
  });
}

async function exportRun(runId: string, options: ExportCommandOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    const data = await engine.exportRun(runId, { force: options.force ?? false });
    await cli.audit("run.export", runId, { status: data.run.status, out: options.out ?? null });
    const text = `${JSON.stringify(data, null, 2)}\n`;
    if (options.out === undefined) return void process.stdout.write(text);
    await writeFile(options.out, text);
    note(`Exported ${runId} (${data.run.status}, ${data.journal.length} journal entries) to ${options.out}.`);
  });
}

async function importRun(file: string, options: ImportCommandOptions): Promise<void> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${(error as Error).message}. Give the path of a file written by \`cairn export\`.`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file} is not JSON (${(error as Error).message}). Give the path of a file written by \`cairn export\`.`);
  }
  await withEngine(
    options,
    [],
    async (engine, cli) => {
      const run = await engine.importRun(data, defined({ as: options.as }));
      await cli.audit("run.import", run.runId, { file, as: options.as ?? null });
      if (options.json) return printJson(run);
      print(`Imported ${run.runId} (${run.status}) from ${file}.`, `Show it with: ${CLI} show ${shellQuote(run.runId)}`);
    },
    { create: true },
  );
}
