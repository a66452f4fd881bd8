import { existsSync, readFileSync } from "node:fs";
import { InvalidArgumentError, type Command } from "commander";
import { versionRefSchema, type ReplayReport, type JournalFile, type VersionSummary } from "../../core/deploys.js";
import { NonDeterminismError } from "../../core/errors.js";
import { readJournalFile } from "../../engine/deploys.js";
import { RUN_STATUSES } from "../../core/run.js";
import { deprecatedCommand } from "../deprecated.js";
import { UsageError } from "../errors.js";
import { CLI, jsonOption, note, print, printJson, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";
import { table } from "../format.js";
import { resolveWorkflows } from "../load-workflows.js";

interface ReplayOptions extends StoreOptions, JsonOptions {
  workflows?: string[];
}

/** Registers `cairn versions`, `cairn retire`, `cairn reinstate` and `cairn replay` (safe deploys), with `drain` / `undrain`, their deprecated older names. */
export function registerDeployCommands(program: Command): void {
  const versions = program
    .command("versions")
    .description("runs per workflow version and status: which versions still have live runs, which are retired")
    .addHelpText("after", `\nExample:\n  ${CLI} versions`);
  storeOption(jsonOption(versions)).action(listVersions);

  const retire = (command: Command): void => {
    command
      .description("retire a workflow version: no worker claims its runs any more (its runs stay where they are)")
      .argument("<version>", "the workflow version, <workflow>@<version>, e.g. research@1", versionArg)
      .addHelpText("after", `\nExample:\n  ${CLI} retire research@1`);
    storeOption(jsonOption(command)).action((ref: VersionRef, options: StoreOptions & JsonOptions) => setRetired(ref, true, options));
  };
  retire(program.command("retire"));
  deprecatedCommand(program, "drain", "retire", retire);

  const reinstate = (command: Command): void => {
    command
      .description("reinstate a retired workflow version: workers claim its runs again")
      .argument("<version>", "the workflow version, <workflow>@<version>", versionArg);
    storeOption(jsonOption(command)).action((ref: VersionRef, options: StoreOptions & JsonOptions) => setRetired(ref, false, options));
  };
  reinstate(program.command("reinstate"));
  deprecatedCommand(program, "undrain", "reinstate", reinstate);

  const replay = program
    .command("replay")
    .description("replay a run's journal against the current code without executing anything; exits 1 on a divergence")
    .argument("<source>", "a run export file (cairn.run/1 JSON) or a run id in the store")
    .option("--workflows <module...>", "ES module(s) exporting the workflows to check (default: the examples)")
    .addHelpText(
      "after",
      `\nExamples:\n  ${CLI} replay export.json --workflows dist/my-workflows.js   # a file from cairn export\n  ${CLI} replay test/fixtures/journals/approval-escalated--po-2@1.json\n  ${CLI} replay thread-42`,
    );
  storeOption(jsonOption(replay)).action(replayCommand);
}

type VersionRef = { workflow: string; version: string };

function versionArg(value: string): VersionRef {
  const parsed = versionRefSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new InvalidArgumentError(`${parsed.error.issues[0]?.message ?? "invalid version"}. Pass <workflow>@<version>, e.g. research@1 (see ${CLI} versions).`);
}

async function listVersions(options: StoreOptions & JsonOptions): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const versions = await engine.listVersions();
    if (options.json) return printJson(versions);
    if (versions.length === 0) return print("No runs yet.");
    print(...versionTable(versions));
  });
}

/** The `cairn versions` table: one row per version, one column per status that any version has. */
export function versionTable(versions: readonly VersionSummary[]): string[] {
  const statuses = RUN_STATUSES.filter((status) => versions.some((v) => (v.counts[status] ?? 0) > 0));
  return table(versions, [
    { header: "WORKFLOW", cell: (v) => v.workflow },
    { header: "VERSION", cell: (v) => v.version },
    { header: "LIVE", cell: (v) => String(v.live) },
    ...statuses.map((status) => ({ header: status.toUpperCase(), cell: (v: VersionSummary) => String(v.counts[status] ?? 0) })),
    { header: "STATE", cell: (v) => (v.drained ? "retired" : "") },
  ]);
}

async function setRetired(ref: VersionRef, retired: boolean, options: StoreOptions & JsonOptions): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    if (retired) {
      // A typo (research@l) would retire nothing useful: say so, and still record it (a version may be deployed later).
      const known = (await engine.listVersions()).some((v) => v.workflow === ref.workflow && v.version === ref.version);
      if (!known) note(`warning: the store has no run of ${ref.workflow}@${ref.version}; check the name and version (${CLI} versions lists them).`);
    }
    const changed = retired ? await engine.retireVersion(ref.workflow, ref.version) : await engine.reinstateVersion(ref.workflow, ref.version);
    if (changed) await cli.audit(retired ? "version.drain" : "version.undrain", `${ref.workflow}@${ref.version}`, null);
    // `drained` is the field's stored name, kept so scripts reading --json keep working.
    if (options.json) return printJson({ ...ref, drained: retired, changed });
    const name = `${ref.workflow}@${ref.version}`;
    if (!changed) return print(`${name} was already ${retired ? "retired" : "in service"}; nothing changed.`);
    print(
      retired
        ? `${name} retired: workers stop claiming its runs within a heartbeat. Its runs stay where they are (see ${CLI} versions).`
        : `${name} reinstated: workers that run it claim its runs again.`,
    );
  });
}

async function replayCommand(source: string, options: ReplayOptions): Promise<void> {
  const workflows = await resolveWorkflows(options.workflows);
  const fromFile = existsSync(source);
  let exported: JournalFile | undefined;
  if (fromFile) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(source, "utf8"));
    } catch (error) {
      throw new UsageError(
        `${source} is not a JSON file (${(error as Error).message}); pass a file from cairn export, a journal file (cairn.run/1) or a run id.`,
      );
    }
    exported = readJournalFile(parsed, source);
  } else if (/\.json$/i.test(source)) {
    throw new UsageError(`No file ${source}. Pass the path of a file from cairn export or a journal file (cairn.run/1), or a run id in the store.`);
  }
  // A file carries its whole journal: replaying it needs no store (and must not create one).
  const report = await withEngine(exported ? { ...options, store: "memory:" } : options, workflows, (engine) => engine.replay(exported ?? source));
  if (options.json) printJson(report);
  else print(...describeReport(report));
  if (report.divergence) throw new NonDeterminismError(report.divergence.opKey, report.divergence.expected, report.divergence.actual);
}

/** A replay report in words. */
export function describeReport(report: ReplayReport): string[] {
  const run = `${report.runId} (${report.workflow}@${report.version})`;
  if (report.divergence) {
    const d = report.divergence;
    const before = report.deliveredOutcomes === 0 ? "before any outcome" : `after ${report.deliveredOutcomes} outcomes, up to seq ${report.replayedSeq}`;
    return [`${run}: diverges at op "${d.opKey}" (${before})`, `  journal: ${d.expected}`, `  code:    ${d.actual}`];
  }
  const where =
    report.stoppedAt === "completed"
      ? "the code runs to its end"
      : report.frontier
        ? `the code then waits on "${report.frontier}", which has no journaled outcome`
        : "the code then waits on ops with no journaled outcome";
  return [`${run}: replays cleanly up to seq ${report.replayedSeq} (${report.deliveredOutcomes} outcomes); ${where}.`];
}
