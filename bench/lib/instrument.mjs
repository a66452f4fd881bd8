// Counts calls to the engine's store (the public `engine.store`), to show how many store
// transactions and reads a workflow costs. Wrapping adds a function call per store call.
import { rootRequire } from "./root-deps.mjs";

const COUNTED = ["createRun", "getRun", "listRuns", "readJournal", "readJournalForResume", "commit", "claimRuns", "renewLeases", "controlRun", "sendEvent", "upsertWorker", "now"];

/**
 * Wraps the store's methods in place; returns { snapshot(): {name: count}, commitMs(): number[] }.
 * commitMs() hands over (and forgets) how long each `commit` (one group-commit transaction) took.
 */
export function countStoreCalls(store) {
  const counts = Object.fromEntries(COUNTED.map((name) => [name, 0]));
  let commitMs = [];
  for (const name of COUNTED) {
    const original = store[name];
    if (typeof original !== "function") continue;
    store[name] =
      name === "commit"
        ? async function timed(...args) {
            counts.commit += 1;
            const start = performance.now();
            try {
              return await original.apply(store, args);
            } finally {
              if (commitMs.length < 100_000) commitMs.push(performance.now() - start);
            }
          }
        : function counted(...args) {
            counts[name] += 1;
            return original.apply(store, args);
          };
  }
  return {
    snapshot: () => ({ ...counts }),
    commitMs: () => {
      const taken = commitMs;
      commitMs = [];
      return taken;
    },
  };
}

/** after - before, per name. */
export function diffCounts(before, after) {
  return Object.fromEntries(Object.keys(after).map((name) => [name, after[name] - (before[name] ?? 0)]));
}

let pgCounter = null;

/**
 * Counts SQL statements sent to PostgreSQL by every `pg` client in this process (the store's pool,
 * its LISTEN connection), by patching pg.Client.prototype.query once. Returns { snapshot(): number },
 * or null when `pg` cannot be loaded.
 */
export async function countPgQueries() {
  if (pgCounter) return pgCounter;
  let pg;
  try {
    pg = rootRequire("pg");
  } catch {
    return null;
  }
  let count = 0;
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function counted(...args) {
    count += 1;
    return original.apply(this, args);
  };
  pgCounter = { snapshot: () => count };
  return pgCounter;
}
