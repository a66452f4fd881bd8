/**
 * The examples' effect ledger: a plain text file, outside the engine's database,
 * with one line per time a step's side effect actually ran. Tests and the demo
 * read it to show that journaled steps are not run again on resume.
 *
 * Recording is off unless `CAIRN_EXAMPLE_LEDGER` names a file; it is read on
 * every call, so a worker process only needs the variable in its environment.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";

/** The environment variable naming the ledger file. */
export const LEDGER_ENV = "CAIRN_EXAMPLE_LEDGER";

/** Appends `<idempotencyKey>\n` to the ledger, if one is configured. Call it inside a step. */
export function recordEffect(idempotencyKey: string): void {
  const file = process.env[LEDGER_ENV];
  if (file) appendFileSync(file, `${idempotencyKey}\n`);
}

/** The ledger's lines in the order they were written (empty when the file does not exist). */
export function readLedger(file: string): string[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "");
}

/** How many times each idempotency key appears in the ledger, in first-seen order. */
export function countLedger(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of readLedger(file)) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}
