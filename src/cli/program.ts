import { readFileSync } from "node:fs";
import { Command } from "commander";
import { registerControlCommands } from "./commands/control.js";
import { registerLiveCommands } from "./commands/live.js";
import { registerDeployCommands } from "./commands/deploys.js";
import { registerDevCommand } from "./commands/dev.js";
import { registerHumanCommands } from "./commands/human.js";
import { registerMigrateCommand } from "./commands/migrate.js";
import { registerRetentionCommands } from "./commands/retention.js";
import { registerQueuesCommand } from "./commands/queues.js";
import { registerOutboxCommands } from "./commands/outbox.js";
import { registerRunCommands } from "./commands/runs.js";
import { registerScheduleCommands } from "./commands/schedules.js";
import { registerSecurityCommands } from "./commands/security.js";
import { registerServeCommand } from "./commands/serve.js";
import { registerStartCommand } from "./commands/start.js";
import { registerTopCommand } from "./commands/top.js";
import { registerWorkerCommand } from "./commands/worker.js";
import { reportError } from "./errors.js";

/** The `cairn` command with every subcommand registered. Exits are turned into exceptions. */
export function buildProgram(): Command {
  const program = new Command("cairn")
    .description("Durable execution for long-running AI agents: start, inspect and control runs, and host workers.")
    .version(packageVersion(), "-v, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .exitOverride()
    .showHelpAfterError("(add --help for usage)")
    .showSuggestionAfterError(true)
    .allowExcessArguments(false);
  registerDevCommand(program);
  registerWorkerCommand(program);
  registerServeCommand(program);
  registerStartCommand(program);
  registerRunCommands(program);
  registerQueuesCommand(program);
  registerTopCommand(program);
  registerControlCommands(program);
  registerLiveCommands(program);
  registerScheduleCommands(program);
  registerDeployCommands(program);
  registerHumanCommands(program);
  registerOutboxCommands(program);
  registerSecurityCommands(program);
  registerMigrateCommand(program);
  registerRetentionCommands(program);
  program.helpCommand("help [command]", "show help for a command");
  return program;
}

/**
 * Runs the CLI with `argv` (as `process.argv`) and returns the exit code:
 * 0 on success, 2 for bad arguments, 1 when the command failed.
 */
export async function runCli(argv: readonly string[]): Promise<number> {
  try {
    await buildProgram().parseAsync([...argv]);
    return 0;
  } catch (error) {
    return reportError(error);
  }
}

function packageVersion(): string {
  for (const path of ["../../../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "cairn" && pkg.version) return pkg.version;
    } catch {
      // not at this depth; try the next
    }
  }
  return "unknown";
}
