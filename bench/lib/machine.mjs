// What the numbers were measured on.
import { availableParallelism, cpus, platform, release, totalmem } from "node:os";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { withPgClient } from "./pg.mjs";

const require = createRequire(import.meta.url);

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

function packageVersion(name) {
  try {
    return require(`${name}/package.json`).version;
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
