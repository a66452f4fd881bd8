import type { Command } from "commander";
import { note } from "./context.js";

/** The one-line notice a deprecated command or option prints on stderr before it runs. */
export function deprecationNotice(old: string, replacement: string): string {
  return `warning: ${old} is deprecated and will be removed; use ${replacement} (it does the same).`;
}

/**
 * Registers `oldName` as a hidden, deprecated alias of a command: `build` configures it exactly as
 * the current command (arguments, options, action), and it prints {@link deprecationNotice} on stderr
 * before it runs, so scripts written against the old name keep working and learn the new one.
 */
export function deprecatedCommand(program: Command, oldName: string, newName: string, build: (command: Command) => void): void {
  const command = program.command(oldName, { hidden: true });
  build(command);
  command.description(`deprecated: use cairn ${newName}`);
  command.hook("preAction", () => note(deprecationNotice(`cairn ${oldName}`, `cairn ${newName}`)));
}
