import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";

const DEMO = resolve("dist/examples/demo.js");
const CLI = resolve("dist/src/cli/main.js");

function runDemo(): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [DEMO], { cwd: resolve("."), env: { ...process.env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", fail);
    child.once("close", (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

describe("npm run demo", () => {
  it("kills a worker mid-run, resumes on a second worker, and finishes", async () => {
    for (const file of [DEMO, CLI]) {
      if (!existsSync(file)) throw new Error(`${file} is missing: the demo test runs the built code. Run \`npm run build\` first (\`npm test\` does).`);
    }

    const { code, signal, stdout, stderr } = await runDemo();
    const report = `exit ${code} ${signal ?? ""}\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`;
    expect(code, report).toBe(0);

    expect(stdout).toMatch(/worker 1 killed \(signal SIGKILL\)/);
    expect(stdout).toMatch(/Start worker 2/);
    expect(stdout).toMatch(/waiting for a person to answer "demo-research:review#0"/);
    expect(stdout).toMatch(/answered "approve"/);
    expect(stdout).toMatch(/ran exactly once/);
    expect(stdout).not.toMatch(/UNEXPECTED/);
    expect(stdout).toMatch(/"status": "approved"/);
    expect(stdout).toMatch(/worker 2 exited/);
    expect(stdout).toMatch(/Done: result approved/);
  }, 120_000);
});
