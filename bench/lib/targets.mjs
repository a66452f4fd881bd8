// Where a case's data lives: a memory store, a SQLite file in a temp dir, or a fresh PostgreSQL
// schema. Each case gets its own and removes it afterwards.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { baseUrl, dropSchema, withPgClient, withSchema } from "./pg.mjs";

let schemas = 0;

/** { url, cleanup } for a fresh store of `kind` ("memory" | "sqlite" | "postgres"). */
export function freshTarget(kind, { tmpDir, pgUrl, name }) {
  if (kind === "memory") return { url: "memory:", cleanup: async () => {} };
  if (kind === "sqlite") {
    const file = join(tmpDir, `${name}.db`);
    return {
      url: `sqlite:${file}`,
      file,
      cleanup: async () => {
        for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  if (kind === "postgres") {
    schemas += 1;
    const schema = `cairn_bench_${process.pid}_${schemas}`;
    return { url: withSchema(pgUrl, schema), schema, cleanup: () => dropSchema(pgUrl, schema) };
  }
  throw new Error(`unknown store kind ${kind}`);
}

let databases = 0;

/**
 * A PostgreSQL database of its own (`cairn_bench_dbos_<pid>_<n>`), for DBOS's system database:
 * { url, database, create(), cleanup() }. cleanup() drops it, closing any connection left to it.
 */
export function freshDatabase(pgUrl, prefix = "cairn_bench_dbos") {
  databases += 1;
  const database = `${prefix}_${process.pid}_${databases}`;
  const parsed = new URL(baseUrl(pgUrl));
  parsed.pathname = `/${database}`;
  return {
    url: parsed.toString(),
    database,
    create: () => withPgClient(pgUrl, (client) => client.query(`CREATE DATABASE "${database}"`)),
    cleanup: () => withPgClient(pgUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)),
  };
}
