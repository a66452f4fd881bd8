import { spawn } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CLI_MAIN, runCli } from "../../test/support/cli.js";
import { onCleanup, tempDir } from "../../test/support/engines.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ENTRY = join(ROOT, "dist/src/index.js");

/** Runs a command line as a shell would, with `npx cairn` meaning this build's CLI. */
function shell(line: string, cwd: string) {
  const command = line.replaceAll("npx cairn", `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI_MAIN)}`);
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.CAIRN_STORE;
  const child = spawn("/bin/sh", ["-c", command], { cwd, env, detached: true });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  onCleanup(() => {
    if (child.exitCode === null) process.kill(-child.pid!, "SIGKILL");
  });
  return { child, closed, output: () => out };
}

describe("what a newcomer runs into", () => {
  it("cairn start prints follow-up commands with the --store and --workflows given, and they work as printed", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "my flows"));
    writeFileSync(
      join(dir, "my flows", "hello.mjs"),
      `import { defineWorkflow } from ${JSON.stringify(ENTRY)};\nexport const hello = defineWorkflow({ name: "hello", version: "1", run: async (ctx) => ctx.step("greet", () => "hi") });\n`,
    );
    const store = `sqlite:${join(dir, "data", "my.db")}`;
    const started = await runCli(["start", "hello", "--run-id", "h1", "--store", store, "--workflows", "my flows/hello.mjs"], { cwd: dir });
    expect(started.code, started.stderr).toBe(0);
    const follow = /Follow it with: (.+)$/m.exec(started.stderr)?.[1];
    const worker = /A worker runs it: (.+)$/m.exec(started.stderr)?.[1];
    expect(follow).toBe(`npx cairn show h1 --follow --store ${store}`);
    expect(worker).toBe(`npx cairn worker --store ${store} --workflows 'my flows/hello.mjs'`);
    const workerProcess = shell(worker!, dir);
    const shown = shell(follow!, dir);
    expect(await shown.closed, shown.output()).toBe(0);
    expect(shown.output()).toContain("run h1 completed");
    process.kill(-workerProcess.child.pid!, "SIGTERM");
    await workerProcess.closed;
  });

  it("--workflows with a TypeScript file fails with what to do instead", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "flows.ts"), `export const x: number = 1;\n`);
    const result = await runCli(["start", "x", "--store", "memory:", "--workflows", "flows.ts"], { cwd: dir });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("does not run TypeScript files by itself");
    expect(result.stderr).toContain("--import tsx");
    expect(result.stderr).toContain(".js/.mjs");
  });

  it('require("cairn/agent") from CommonJS says the package is ESM-only and how to import it', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(ROOT, join(dir, "node_modules", "cairn"));
    writeFileSync(join(dir, "app.cjs"), `require("cairn/agent");\n`);
    const child = spawn(process.execPath, ["app.cjs"], { cwd: dir });
    let err = "";
    child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).not.toBe(0);
    expect(err).toContain("cairn is ESM-only");
    expect(err).toContain('await import("cairn/agent")');
  });
});
