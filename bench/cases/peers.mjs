// Peers on the same work and the same database: DBOS Transact (10-step workflows of trivial steps on
// the same PostgreSQL) and LangGraph.js (a 10-node linear graph with its SQLite and PostgreSQL
// checkpointers). Each runs in a child process (bench/peers/*.mjs) with the peer's packages from
// bench/node_modules, sequentially or with `concurrency` executions in flight (a closed loop of
// clients, each starting its next workflow or graph when the last one ended).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startChild } from "../lib/child.mjs";
import { withPgClient } from "../lib/pg.mjs";

const BENCH_DIR = fileURLToPath(new URL("..", import.meta.url));
const TIMEOUT_MS = 300_000;

/** The packages the peer cases load, all installed by `npm --prefix bench ci`. */
export const PEER_PACKAGES = ["@dbos-inc/dbos-sdk", "@langchain/langgraph", "@langchain/langgraph-checkpoint-sqlite", "@langchain/langgraph-checkpoint-postgres", "@langchain/core", "better-sqlite3", "pg"];

/** Why the peers cannot run (a missing package), or null. */
export function missingPeers() {
  const missing = PEER_PACKAGES.filter((name) => !existsSync(join(BENCH_DIR, "node_modules", name, "package.json")));
  return missing.length ? `not installed in bench/node_modules: ${missing.join(", ")} (run npm --prefix bench ci)` : null;
}

function env({ concurrency, reps, targetSec }) {
  return { BENCH_CONCURRENCY: String(concurrency), BENCH_REPS: String(reps), BENCH_TARGET_SEC: String(targetSec) };
}

/** DBOS Transact: 10-step workflows on its system database at `dbosUrl`. */
export async function dbosThroughputCase(dbosUrl, options) {
  const child = startChild(join(BENCH_DIR, "peers", "dbos.mjs"), {
    args: ["throughput"],
    cwd: BENCH_DIR,
    env: { ...env(options), BENCH_DBOS_URL: dbosUrl },
    onProgress: options.onProgress,
  });
  try {
    return await child.result(TIMEOUT_MS);
  } finally {
    await child.kill();
  }
}

/**
 * LangGraph.js: `checkpointer` is "sqlite" (file `file`), "sqlite-full" (the same, synchronous=FULL) or
 * "postgres" (tables in `schema` of `pgUrl`, created here; the case's cleanup drops it).
 */
export async function langgraphCase(checkpointer, { file, pgUrl, schema, ...options }) {
  if (checkpointer === "postgres") await withPgClient(pgUrl, (client) => client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`));
  const child = startChild(join(BENCH_DIR, "peers", "langgraph.mjs"), {
    args: [checkpointer],
    cwd: BENCH_DIR,
    env: { ...env(options), ...(file ? { BENCH_LG_FILE: file } : {}), ...(pgUrl ? { BENCH_PG_URL: pgUrl, BENCH_LG_SCHEMA: schema } : {}) },
    onProgress: options.onProgress,
  });
  try {
    return await child.result(TIMEOUT_MS);
  } finally {
    await child.kill();
  }
}
