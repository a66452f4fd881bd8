import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_MAIN, runCli } from "../../test/support/cli.js";

// Guards against mistakes a newcomer makes on the command line: each was silently accepted before.
let dir: string;

beforeAll(() => {
  if (!existsSync(CLI_MAIN)) throw new Error(`${CLI_MAIN} is missing: compile the project first (npm run build), then run the tests.`);
  dir = mkdtempSync(join(tmpdir(), "cairn-cli-guards-"));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the CLI refuses what it would otherwise get silently wrong", () => {
  it("read-only commands refuse a SQLite path with no store and create nothing there", async () => {
    const missing = join(dir, "nowhere", "typo.db");
    for (const args of [["runs"], ["show", "r1"], ["human-requests"], ["inbox"], ["versions"], ["outbox"], ["audit"]]) {
      const result = await runCli([...args, "--store", `sqlite:${missing}`], { cwd: dir });
      expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(`No Cairn store at ${missing}`);
      expect(result.stderr).toMatch(/--store.*CAIRN_STORE/);
    }
    // The default store, from a directory without one: same refusal, no .cairn/ left behind.
    const fromHere = await runCli(["runs"], { cwd: dir });
    expect(fromHere.code).toBe(2);
    expect(existsSync(join(dir, "nowhere"))).toBe(false);
    expect(existsSync(join(dir, ".cairn"))).toBe(false);
    // Commands that add data still create the store.
    const created = join(dir, "made.db");
    const token = await runCli(["token", "create", "--name", "ci", "--scope", "read", "--store", `sqlite:${created}`], { cwd: dir });
    expect(token.code, token.stderr).toBe(0);
    expect(existsSync(created)).toBe(true);
  });

  it("cairn serve on a taken port says so and how to pick another", async () => {
    const { createServer } = await import("node:net");
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const result = await runCli(["serve", "--port", String(port), "--store", `sqlite:${join(dir, "serve.db")}`], { cwd: dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("EADDRINUSE");
      expect(result.stderr).toMatch(/--port <n> \(--port 0 picks a free one\)/);
    } finally {
      taken.close();
    }
  });

  it("a second live token with a taken name is refused, naming the one that has it", async () => {
    const store = `sqlite:${join(dir, "tokens.db")}`;
    const first = await runCli(["token", "create", "--name", "deploy", "--scope", "read", "--json", "--store", store], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    const id = (JSON.parse(first.stdout) as { record: { id: string } }).record.id;
    const second = await runCli(["token", "create", "--name", "deploy", "--scope", "write", "--store", store], { cwd: dir });
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain(`already named "deploy" (id ${id})`);
    const byName = await runCli(["token", "revoke", "deploy", "--store", store], { cwd: dir });
    expect(byName.stderr).toMatch(/takes the token's id, not its name/);
    expect((await runCli(["token", "revoke", id, "--store", store], { cwd: dir })).code).toBe(0);
    // Once revoked, the name is free again.
    expect((await runCli(["token", "create", "--name", "deploy", "--scope", "read", "--store", store], { cwd: dir })).code).toBe(0);
  });

  it("retention durations need a unit: a bare number would prune everything older than that many ms", async () => {
    const store = `sqlite:${join(dir, "retention.db")}`;
    const result = await runCli(["worker", "--retention-completed", "30", "--store", store], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--retention-completed.*bare number has no unit.*30d/s);
    expect(existsSync(join(dir, "retention.db"))).toBe(false);
  });

  it("replay of a missing file says the file is missing; replaying a file needs no store and creates none", async () => {
    const examples = join(CLI_MAIN, "../../../examples/index.js");
    const missing = await runCli(["replay", "./nofile.json", "--workflows", examples], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("No file ./nofile.json");
    const fixtures = join(CLI_MAIN, "../../../../test/fixtures/journals");
    const fixture = readdirSync(fixtures).find((name) => name.startsWith("approval"));
    expect(fixture, "a committed approval journal").toBeDefined();
    const replayed = await runCli(["replay", join(fixtures, fixture!), "--workflows", examples], { cwd: dir });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(existsSync(join(dir, ".cairn"))).toBe(false);
  });

  it("a refused connection says to check the store URL and the database server", async () => {
    const result = await runCli(["runs", "--store", "postgres://postgres@127.0.0.1:1/none"], { cwd: dir });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/ECONNREFUSED/);
    expect(result.stderr).toMatch(/check --store \(or CAIRN_STORE\)/);
  });
});
