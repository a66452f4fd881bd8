import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "./support/cli.js";
import { PG_URL, pgReachable } from "./support/pg-schema.js";

// The CLI against PostgreSQL (CAIRN_TEST_PG_URL): a store that is not there is refused, not created.
const reachable = await pgReachable();
const dir = mkdtempSync(join(tmpdir(), "cairn-cli-pg-"));
const schema = `cli_guard_${process.pid}_${Date.now()}`;
const urlOf = (name: string) => {
  const url = new URL(PG_URL);
  url.searchParams.set("schema", name);
  return url.toString();
};

async function schemaExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [name]);
    return rows.length > 0;
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (!reachable) return;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

describe.skipIf(!reachable)("the CLI on PostgreSQL refuses a store that is not there", () => {
  it("read-only commands refuse a mistyped schema and create nothing; once migrated they work", async () => {
    for (const args of [["runs"], ["show", "r1"], ["human-requests"]]) {
      const result = await runCli([...args, "--store", urlOf(schema)], { cwd: dir });
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(`No Cairn store in schema "${schema}"`);
      expect(result.stderr).toMatch(/--store.*CAIRN_STORE.*\?schema=/);
    }
    expect(await schemaExists(schema)).toBe(false);
    const created = await runCli(["migrate", "--store", urlOf(schema)], { cwd: dir });
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/was created \(\d+ migrations applied\)\.\n {2}schema version {2}\d+/);
    expect((await runCli(["migrate", "--store", urlOf(schema)], { cwd: dir })).stdout).toMatch(/is up to date\.\n {2}schema version {2}\d+/);
    const runs = await runCli(["runs", "--store", urlOf(schema)], { cwd: dir });
    expect(runs.code, runs.stderr).toBe(0);
  });

  it("a database that does not exist is named, with where to look", async () => {
    const url = new URL(PG_URL);
    url.pathname = "/no_such_database_for_cairn";
    const result = await runCli(["runs", "--store", url.toString()], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('database "no_such_database_for_cairn" does not exist');
    expect(result.stderr).toMatch(/check the database, user and password in --store/);
  });
});
