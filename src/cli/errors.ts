import { CommanderError } from "commander";
import { isCairnError } from "../core/errors.js";
import { escapeTerminal } from "./terminal-escape.js";

/** Exit code for bad arguments or options (what was typed was wrong). */
export const EXIT_USAGE = 2;
/** Exit code for a command that was understood but failed. */
export const EXIT_FAILURE = 1;

/**
 * A command was called wrongly. Printed without a stack trace and exits with {@link EXIT_USAGE}.
 * The message says what was wrong and what to do instead.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EHOSTUNREACH", "ETIMEDOUT", "ECONNRESET", "EAI_AGAIN"]);
/** PostgreSQL refusing the connection itself: no such database (3D000), role or password (28000, 28P01). */
const LOGIN_CODES = new Set(["3D000", "28000", "28P01"]);

/**
 * Prints `error` for a person on stderr and returns the exit code to use.
 * Stack traces are shown only when `CAIRN_DEBUG` is set.
 */
export function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // Commander has already printed its message (help, version, or what was wrong).
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.code === "commander.help") return error.exitCode;
    return EXIT_USAGE;
  }
  if (error instanceof UsageError) {
    process.stderr.write(`error: ${escapeTerminal(error.message)}\n`);
    return EXIT_USAGE;
  }
  if (isCairnError(error)) {
    process.stderr.write(`error [${error.code}]: ${escapeTerminal(error.message)}\n`);
    // The library rejected a value typed on the command line: still a usage error.
    if (error.code === "INVALID_INPUT") return EXIT_USAGE;
  } else {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${escapeTerminal(message)}\n`);
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === "string" && CONNECTION_CODES.has(code))
      process.stderr.write("The store could not be reached: check --store (or CAIRN_STORE) and that the database server is running and accepts connections.\n");
    if (typeof code === "string" && LOGIN_CODES.has(code))
      process.stderr.write("The database server refused the store URL: check the database, user and password in --store (or CAIRN_STORE).\n");
    if (code === "EADDRINUSE")
      process.stderr.write("The port is taken by another process: pick another with --port <n> (--port 0 picks a free one), or stop the other process.\n");
  }
  if (process.env.CAIRN_DEBUG && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  return EXIT_FAILURE;
}
