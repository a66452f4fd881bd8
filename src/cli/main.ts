#!/usr/bin/env node
/**
 * The `cairn` command-line interface: the composition root that picks a store
 * and wires the engine, workers and workflows together.
 * @module
 */
import { runCli } from "./program.js";

// `cairn show … | head` closes stdout early: that is the reader's choice, not a failure.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

const code = await runCli(process.argv);
process.exitCode = code;
// A one-shot command has closed its engine; if a stray handle still holds the
// event loop, do not hang the shell. Unref'd, so a clean exit is not delayed.
setTimeout(() => process.exit(code), 2_000).unref();
