import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { onCleanup, tempDir } from "../../test/support/engines.js";
import { createEngine } from "../engine/create-engine.js";
import { silentLogger } from "../engine/logger.js";
import { waitFor } from "../testing/wait-for.js";
import { parseExposition as parse } from "../../test/support/prometheus-text.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = join(ROOT, "dist/src/cli/main.js");
const ENTRY = join(ROOT, "dist/src/index.js");

/** Spawns the compiled CLI; resolves with the first stdout line matching `ready`. Killed with SIGKILL after the test. */
function spawnUntil(args: string[], ready: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first.`);
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  onCleanup(() => void child.kill("SIGKILL"));
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => reject(new Error(`cairn ${args[0]} did not print ${ready} in 20s.\nstdout: ${stdout}\nstderr: ${stderr}`)), 20_000);
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      for (const line of stdout.split("\n")) {
        const match = ready.exec(line);
        if (match) {
          clearTimeout(timer);
          return resolve({ child, match });
        }
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`cairn ${args[0]} exited with ${code} before printing ${ready}.\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

function run(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("exit", (code) => resolve({ code, stderr }));
  });
}

describe("cairn worker --metrics-port", () => {
  it("serves the worker process's own step counters while another process starts the runs", { timeout: 60_000 }, async () => {
    const dir = tempDir();
    const store = `sqlite:${join(dir, "cairn.db")}`;
    const fixture = join(dir, "counted.mjs");
    writeFileSync(
      fixture,
      [
        `import { defineWorkflow } from ${JSON.stringify(pathToFileURL(ENTRY).href)};`,
        `export const counted = defineWorkflow({`,
        `  name: "counted",`,
        `  async run(ctx) {`,
        `    await ctx.step("one", () => 1);`,
        `    return ctx.step("two", ({ attempt }) => { if (attempt === 1) throw new Error("once"); return 2; }, { retry: { maxAttempts: 2, initialDelay: 1 } });`,
        `  },`,
        `});`,
      ].join("\n"),
    );
    const { child, match } = await spawnUntil(
      ["worker", "--workflows", fixture, "--poll-ms", "20", "--store", store, "--metrics-port", "0"],
      /^ {2}metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)$/,
    );
    const url = match[1]!;
    const scrape = async () => {
      const res = await fetch(url);
      expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
      return parse(await res.text());
    };
    expect((await scrape()).get('cairn_steps_total{workflow="counted",outcome="completed"}')).toBeUndefined();

    // Other processes start the runs (as `cairn serve --no-worker` would); the worker process executes them.
    for (const runId of ["m1", "m2"]) expect((await run(["start", "counted", "--run-id", runId, "--workflows", fixture, "--store", store])).code).toBe(0);
    const client = await createEngine({ store, logger: silentLogger });
    onCleanup(() => client.close());
    await waitFor(async () => (await client.listRuns({ status: "completed" })).runs.length === 2, { timeoutMs: 20_000 });

    const m = await scrape();
    expect(m.get('cairn_steps_total{workflow="counted",outcome="completed"}')).toBe(4);
    expect(m.get('cairn_steps_total{workflow="counted",outcome="retry"}')).toBe(2);
    expect(m.get('cairn_step_retries_total{workflow="counted"}')).toBe(2);
    expect(m.get('cairn_step_duration_seconds_count{workflow="counted",outcome="completed"}')).toBe(4);
    expect(m.get('cairn_runs{workflow="counted",status="completed"}')).toBe(2);
    expect(m.get("cairn_workers")).toBe(1);

    // SIGTERM drains and closes the metrics endpoint too: the process exits by itself.
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("refuses a non-loopback --metrics-host without --metrics-auth tokens", async () => {
    const store = `sqlite:${join(tempDir(), "cairn.db")}`;
    const refused = await run(["worker", "--store", store, "--metrics-port", "0", "--metrics-host", "0.0.0.0"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/Refusing to serve metrics on 0\.0\.0\.0 without authentication.*--metrics-auth tokens/s);
  });
});
