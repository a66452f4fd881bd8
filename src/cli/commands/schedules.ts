import { InvalidArgumentError, type Command } from "commander";
import { scheduleNameSchema, type ScheduleInfo } from "../../engine/schedule.js";
import { UsageError } from "../errors.js";
import { CLI, jsonOption, print, printJson, storeOption, withEngine, type JsonOptions, type StoreOptions } from "../context.js";
import { formatTime, table } from "../format.js";

type Options = StoreOptions & JsonOptions;

function nameArg(value: string): string {
  const parsed = scheduleNameSchema.safeParse(value);
  if (!parsed.success)
    throw new InvalidArgumentError(`Schedule name ${parsed.error.issues[0]?.message ?? "is invalid"}. List names with \`${CLI} schedules\`.`);
  return parsed.data;
}

/** Registers `cairn schedules` (list) and `cairn schedules pause|resume <name>`. */
export function registerScheduleCommands(program: Command): void {
  const schedules = program
    .command("schedules")
    .description("list schedules: cron, time zone, status, next fire time, last tick, last run and its status")
    .addHelpText("after", `\nExamples:\n  ${CLI} schedules\n  ${CLI} schedules pause nightly-report\n  ${CLI} schedules resume nightly-report`)
    // Without it, a mistyped subcommand (`schedules remove x`) reads as stray arguments of the list.
    .argument("[subcommand...]");
  storeOption(jsonOption(schedules)).action((stray: string[], options: Options) => {
    if (stray.length > 0) throw new UsageError(`Unknown subcommand "${stray[0]}" of schedules: use pause, resume or delete <name>, or none to list them.`);
    return listSchedules(options);
  });

  // --store and --json are the parent's (commander parses them wherever they appear).
  schedules
    .command("pause")
    .description("stop firing a schedule until resumed (ticks meanwhile are not fired later; takes --store, --json)")
    .argument("<name>", "the schedule", nameArg)
    .action((name: string, _local: unknown, command: Command) => setPaused(name, true, command.parent!.opts<Options>()));

  schedules
    .command("resume")
    .description("fire a paused schedule again, from its next tick after now (takes --store, --json)")
    .argument("<name>", "the schedule", nameArg)
    .action((name: string, _local: unknown, command: Command) => setPaused(name, false, command.parent!.opts<Options>()));

  schedules
    .command("delete")
    .description(
      "remove a schedule (its runs stay); one still passed to createEngine({ schedules }) or exported by a --workflows module comes back when that process starts",
    )
    .argument("<name>", "the schedule", nameArg)
    .action((name: string, _local: unknown, command: Command) => deleteSchedule(name, command.parent!.opts<Options>()));
}

async function deleteSchedule(name: string, options: Options): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    await engine.deleteSchedule(name);
    await cli.audit("schedule.delete", name);
    if (options.json) return printJson({ name, deleted: true });
    print(`${name}: deleted. Its runs stay; remove it from the module that defines it, or it comes back when that worker starts.`);
  });
}

async function listSchedules(options: Options): Promise<void> {
  await withEngine(options, [], async (engine) => {
    const schedules = await engine.listSchedules();
    if (options.json) return printJson(schedules);
    if (schedules.length === 0) return print("No schedules. Define them with defineSchedule() and pass them to createEngine({ schedules }).");
    print(...scheduleTable(schedules));
  });
}

async function setPaused(name: string, paused: boolean, options: Options): Promise<void> {
  await withEngine(options, [], async (engine, cli) => {
    const schedule = paused ? await engine.pauseSchedule(name) : await engine.resumeSchedule(name);
    await cli.audit(paused ? "schedule.pause" : "schedule.resume", name);
    if (options.json) return printJson(schedule);
    print(paused ? `${name}: paused.` : `${name}: resumed; next tick ${formatTime(schedule.nextTickAt)}.`);
  });
}

/** The `cairn schedules` table. */
export function scheduleTable(schedules: readonly ScheduleInfo[]): string[] {
  return table(schedules, [
    { header: "name", cell: (s) => s.name },
    { header: "workflow", cell: (s) => s.workflow },
    { header: "cron", cell: (s) => `${s.cron} (${s.timezone})` },
    { header: "status", cell: (s) => s.status },
    { header: "next", cell: (s) => (s.nextTickAt ? formatTime(s.nextTickAt) : "-") },
    { header: "last tick", cell: (s) => (s.lastTickAt ? formatTime(s.lastTickAt) : "-") },
    { header: "last run", cell: (s) => (s.lastRunId ? `${s.lastRunId} (${s.lastRunStatus ?? "gone"})` : "-") },
    { header: "fired/skipped/missed", cell: (s) => `${s.firedCount}/${s.skippedCount}/${s.missedCount}${s.bufferedTickAt ? " +1 buffered" : ""}` },
  ]);
}
