// What the numbers were measured on.
import { availableParallelism, cpus, platform, release, totalmem } from "node:os";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { withPgClient } from "./pg.mjs";
import { rootRequire } from "./root-deps.mjs";

const Database = rootRequire("better-sqlite3");
const PEERS = ["@dbos-inc/dbos-sdk", "@langchain/langgraph", "@langchain/langgraph-checkpoint-sqlite", "@langchain/langgraph-checkpoint-postgres", "@langchain/core", "@restatedev/restate-sdk", "@restatedev/restate-server", "workflow", "@workflow/core", "@workflow/world-local", "@workflow/builders"];

export async function describeMachine({ pgUrl, wantPg }) {
  const memory = new Database(":memory:");
  const sqlite = memory.prepare("SELECT sqlite_version()").pluck().get();
  memory.close();
  const machine = {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: `${platform()} ${release()}`,
    node: process.version,
    sqlite,
    betterSqlite3: packageVersion("better-sqlite3"),
    postgres: null,
    pgClient: null,
    cairnCommit: gitDescription(),
    peers: Object.fromEntries(PEERS.map((name) => [name, peerVersion(name)])),
  };
  if (wantPg) {
    try {
      machine.postgres = await withPgClient(pgUrl, async (client) => {
        const { rows } = await client.query("SELECT current_setting('server_version') AS v, current_setting('fsync') AS f, current_setting('synchronous_commit') AS s, current_setting('wal_sync_method') AS w");
        return `${rows[0].v} (fsync=${rows[0].f}, synchronous_commit=${rows[0].s}, wal_sync_method=${rows[0].w})`;
      });
      machine.pgClient = `pg ${packageVersion("pg")}`;
    } catch {
      machine.postgres = null;
    }
  }
  return machine;
}

/** Version of a peer installed in bench/node_modules (read directly: some packages do not export package.json). */
function peerVersion(name) {
  try {
    return JSON.parse(readFileSync(fileURLToPath(new URL(`../node_modules/${name}/package.json`, import.meta.url)), "utf8")).version;
  } catch {
    return null;
  }
}

function packageVersion(name) {
  try {
    return rootRequire(`${name}/package.json`).version;
  } catch {
    return null;
  }
}

/** The commit the package was built from, "+ uncommitted changes" when src/ differs from it. */
function gitDescription() {
  const cwd = fileURLToPath(new URL("../..", import.meta.url));
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "package.json"], { cwd, encoding: "utf8" }).trim() !== "";
    return dirty ? `${commit} + uncommitted changes in src/` : commit;
  } catch {
    return null;
  }
}
