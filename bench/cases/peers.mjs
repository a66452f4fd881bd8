// Peers on the same work: DBOS Transact (10-step workflows of trivial steps on the same PostgreSQL),
// LangGraph.js (a 10-node linear graph with its SQLite and PostgreSQL checkpointers) and Restate
// (10-step workflows journaled by its own server, bench/lib/restate-server.mjs, on the same disk) and
// Vercel's Workflow DevKit (10-step workflows built with its SWC plugin, its local world's JSON files
// in a temp dir on the same disk).
// Each runs in a child process (bench/peers/*.mjs) with the peer's packages from bench/node_modules,
// sequentially or with `concurrency` executions in flight (a closed loop of clients, each starting
// its next workflow or graph when the last one ended).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startChild } from "../lib/child.mjs";
import { withPgClient } from "../lib/pg.mjs";
import { restateBinary, startRestateServer } from "../lib/restate-server.mjs";

const BENCH_DIR = fileURLToPath(new URL("..", import.meta.url));
const TIMEOUT_MS = 300_000;

/** The packages the peer cases load, all installed by `npm --prefix bench ci`. */
export const PEER_PACKAGES = ["@dbos-inc/dbos-sdk", "@langchain/langgraph", "@langchain/langgraph-checkpoint-sqlite", "@langchain/langgraph-checkpoint-postgres", "@langchain/core", "better-sqlite3", "pg", "@restatedev/restate-sdk", "@restatedev/restate-server", "workflow", "@workflow/builders", "@workflow/world-local", "@workflow/swc-plugin", "@swc/core"];

/** Why the peers cannot run (a missing package, or no restate-server binary for this platform), or null. */
export function missingPeers() {
  const missing = PEER_PACKAGES.filter((name) => !existsSync(join(BENCH_DIR, "node_modules", name, "package.json")));
  if (!missing.includes("@restatedev/restate-server") && !restateBinary()) missing.push(`@restatedev/restate-server's binary for ${process.platform}-${process.arch}`);
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

/**
 * Restate: 10-step workflows through a fresh restate-server's ingress, served by an SDK endpoint in a
 * child process (bench/peers/restate.mjs). The result carries the server's version and durability settings.
 */
export async function restateThroughputCase(options) {
  const server = await startRestateServer({ onProgress: options.onProgress });
  try {
    const child = startChild(join(BENCH_DIR, "peers", "restate.mjs"), {
      args: ["throughput"],
      cwd: BENCH_DIR,
      env: { ...env(options), BENCH_RESTATE_INGRESS: server.ingressUrl, BENCH_RESTATE_ADMIN: server.adminUrl, BENCH_RESTATE_PORT: "0", BENCH_RESTATE_SERVER_PID: String(server.pid) },
      onProgress: options.onProgress,
    });
    try {
      const out = await child.result(TIMEOUT_MS);
      return { ...out, server: server.version, durability: server.durability };
    } finally {
      await child.kill();
    }
  } finally {
    await server.stop();
  }
}

/**
 * The Workflow DevKit's local world, as measured (strace -f -e trace=fsync,fdatasync,sync_file_range,
 * syncfs,msync over 20 sequential workflows, bench/RESULTS-notes.md): each event, step and run is a
 * JSON file written to a temp name and renamed into place, never fsynced (nor its directory).
 */
export const WDK_DURABILITY = { storage: "JSON files (write + rename)", fsync: false, replication: 1 };

/**
 * Vercel's Workflow DevKit: 10-step workflows built in a temp dir with its SWC plugin and run on its
 * local world in a child process (bench/peers/workflow-devkit.mjs). The result carries the versions,
 * the transport of the world's queue and its durability.
 */
export async function workflowDevkitThroughputCase(options) {
  const child = startChild(join(BENCH_DIR, "peers", "workflow-devkit.mjs"), {
    args: ["throughput"],
    cwd: BENCH_DIR,
    env: { ...env(options), BENCH_WDK_TRANSPORT: options.transport ?? "direct" },
    onProgress: options.onProgress,
  });
  try {
    const out = await child.result(TIMEOUT_MS);
    return { ...out, durability: WDK_DURABILITY };
  } finally {
    await child.kill();
  }
}
