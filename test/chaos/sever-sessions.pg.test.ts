/**
 * A process survives its PostgreSQL sessions being terminated (pg_terminate_backend on the backends
 * of its application_name, as the chaos nemesis does) in every state a session can be in, and its
 * store works again afterwards. Each scenario runs in its own process (test/fixtures/pg-sever-target.mjs),
 * because what goes wrong is an 'error' event on a pg connection that nobody listens to: it kills
 * the process.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { requireBuild } from "../support/processes.js";
import { chaosSchema, PG_URL } from "./support/pg.js";

const TARGET = resolve("test/fixtures/pg-sever-target.mjs");

async function play(scenario: string, poolSize = 10): Promise<{ code: number | null; output: string }> {
  requireBuild();
  const schema = await chaosSchema();
  const child = spawn(process.execPath, [TARGET, scenario], {
    env: { ...process.env, CAIRN_TEST_STORE: schema.url(`${schema.name}_s`), CAIRN_TEST_PG_URL: PG_URL, CAIRN_TEST_POOL_SIZE: String(poolSize) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const code = await new Promise<number | null>((done) => child.once("exit", (exitCode) => done(exitCode)));
  clearTimeout(timer);
  return { code, output };
}

describe("terminated PostgreSQL sessions", () => {
  it.each([
    ["idle", "pooled connections sitting idle"],
    ["query", "a statement running outside a transaction"],
    ["transaction", "a transaction between statements and inside one"],
    ["listen", "the LISTEN connection (it reconnects and hears wake-ups again)"],
  ])("%s: %s", async (scenario) => {
    const { code, output } = await play(scenario);
    expect(output).toMatch(/severed [1-9]/);
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining("recovered\nsurvived\n") });
  });

  it("a connection cut as its statement ends, while another operation waits for it (pool of one)", async () => {
    // The end of the statement and the FATAL arrive in one read: the pool hands the connection to
    // the waiter, and the FATAL is emitted before the waiter could listen for it.
    const { code, output } = await play("handover", 1);
    expect({ code, output }).toEqual({ code: 0, output: expect.stringContaining("waiting resolved\nrecovered\nsurvived\n") });
  });
});
