import type { Command } from "commander";
import { BULK_MAX_RUNS } from "../../core/api-schemas.js";
import { cutoffSchema } from "../../core/retention-schemas.js";
import { FAILED_STATUSES, LIVE_STATUSES } from "../../core/run-status.js";
import type { RunStatus } from "../../core/run.js";
import { parseTagFilters } from "../../core/tags.js";
import type { Engine, ListRunsOptions } from "../../engine/engine.js";
import { CLI, note, print, printJson, shellQuote, withEngine, type JsonOptions, type StoreOptions } from "../context.js";
import { UsageError } from "../errors.js";

/** The filters of `cairn runs` (and of its bulk `cancel` / `retry`), as commander parses them. */
export interface RunFilterOptions extends StoreOptions, JsonOptions {
  status?: RunStatus[];
  workflow?: string;
  search?: string;
  tag?: string[];
  topLevel?: boolean;
  createdAfter?: string;
  createdBefore?: string;
}

/** The store query of these filters (`now` resolves a cutoff such as `2h`), without system runs unless `--workflow` names one. */
export function runFilterQuery(options: RunFilterOptions, now: number): ListRunsOptions {
  const tags = options.tag ? parseTagFilters(options.tag, "=", "--tag") : undefined;
  return {
    // System runs (alert runs) are listed only when --workflow names their workflow.
    excludeSystem: true,
    ...(options.status ? { status: options.status } : {}),
    ...(options.workflow ? { workflow: options.workflow } : {}),
    ...(options.search ? { q: options.search } : {}),
    ...(tags ? { tags } : {}),
    ...(options.topLevel ? { topLevel: true } : {}),
    ...(options.createdAfter ? { createdAfter: cutoffSchema.parse(options.createdAfter)(now) } : {}),
    ...(options.createdBefore ? { createdBefore: cutoffSchema.parse(options.createdBefore)(now) } : {}),
  };
}

/** True when any filter is given. */
function filtered(options: RunFilterOptions): boolean {
  return Boolean(options.status || options.workflow || options.search || options.tag || options.topLevel || options.createdAfter || options.createdBefore);
}

interface BulkOptions {
  reason?: string;
  yes?: boolean;
}

type Action = "cancel" | "retry";

/** Statuses a bulk action applies to, as `POST /bulk/cancel|retry` applies them: cancel stops unfinished runs, retry restarts failed ones. */
const APPLIES_TO: Record<Action, readonly RunStatus[]> = { cancel: LIVE_STATUSES, retry: FAILED_STATUSES };

/**
 * Registers `cairn runs cancel` and `cairn runs retry`: the runs the listing's filters select (only
 * unfinished ones for cancel, failed ones for retry; at most 1000), listed first, acted on with
 * `--yes`, each audited as `run.cancel` / `run.retry` with `bulk: true`, as the dashboard's bulk actions are.
 */
export function registerBulkRunCommands(runs: Command): void {
  for (const action of ["cancel", "retry"] as const) {
    const command = runs
      .command(action)
      .description(
        action === "cancel"
          ? "cancel every unfinished run the filters of `runs` select (lists them; --yes acts; takes runs' --status, --workflow, --tag, --search, --top-level, --created-after/-before)"
          : "retry every failed run the filters of `runs` select (lists them; --yes acts; takes runs' filters)",
      )
      .option("--yes", "act on them (without it, only list what would be acted on)");
    if (action === "cancel") command.option("--reason <text>", "why (kept in each run's journal and the audit log)");
    command.addHelpText(
      "after",
      `\nExamples:\n  ${CLI} runs ${action} --workflow research --created-after 2h           # what it would ${action}\n  ${CLI} runs ${action} --workflow research --created-after 2h --yes`,
    );
    command.action((local: BulkOptions, self: Command) => bulk(action, self.parent!.opts<RunFilterOptions>(), local));
  }
}

async function bulk(action: Action, filters: RunFilterOptions, options: BulkOptions): Promise<void> {
  if (!filtered(filters))
    throw new UsageError(`runs ${action} needs at least one filter (--status, --workflow, --tag, --search, --top-level, --created-after or --created-before).`);
  const allowed = APPLIES_TO[action];
  const status = (filters.status ?? allowed).filter((s) => allowed.includes(s));
  await withEngine(filters, [], async (engine, cli) => {
    const runIds = status.length === 0 ? [] : await targets(engine, { ...runFilterQuery(filters, Date.now()), status });
    const verb = action === "cancel" ? "cancel" : "retry";
    if (runIds.length === 0) {
      if (filters.json) return printJson({ action, runIds, done: [], failed: [] });
      return print(`No ${action === "cancel" ? "unfinished" : "failed"} run matches; nothing to ${verb}.`);
    }
    if (!options.yes) {
      if (filters.json) return printJson({ action, runIds, done: [], failed: [], dryRun: true });
      print(
        `${runIds.length} ${runIds.length === 1 ? "run" : "runs"} would be ${action === "cancel" ? "cancelled" : "retried"}:`,
        ...runIds.slice(0, 20).map((id) => `  ${id}`),
      );
      if (runIds.length > 20) print(`  … and ${runIds.length - 20} more`);
      return note(`Nothing done. Add --yes to ${verb} ${runIds.length === 1 ? "it" : `these ${runIds.length}`}.`);
    }
    const done: string[] = [];
    const failed: { runId: string; error: string }[] = [];
    for (const runId of runIds) {
      try {
        if (action === "cancel") await engine.cancel(runId, options.reason);
        else await engine.retry(runId);
        await cli.audit(`run.${action}`, runId, { bulk: true, ...(options.reason === undefined ? {} : { reason: options.reason }) });
        done.push(runId);
      } catch (error) {
        failed.push({ runId, error: error instanceof Error ? error.message : String(error) });
      }
    }
    if (filters.json) return printJson({ action, runIds, done, failed });
    print(`${action === "cancel" ? "Cancelled" : "Retried"} ${done.length} ${done.length === 1 ? "run" : "runs"}.`);
    for (const failure of failed) print(`  ${shellQuote(failure.runId)}: ${failure.error}`);
    if (failed.length > 0) process.exitCode = 1;
  });
}

/** Every run the query lists (at most {@link BULK_MAX_RUNS}; more is an error: narrow the filters). */
async function targets(engine: Engine, query: ListRunsOptions): Promise<string[]> {
  const runIds: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await engine.listRuns({ ...query, limit: 1000, ...(cursor === undefined ? {} : { cursor }) });
    runIds.push(...page.runs.map((run) => run.runId));
    if (runIds.length > BULK_MAX_RUNS)
      throw new UsageError(`The filters select more than ${BULK_MAX_RUNS} runs; narrow them (e.g. --created-after) and repeat.`);
    cursor = page.nextCursor;
  } while (cursor);
  return runIds;
}
