import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The compiled CLI (`npm run build`). */
export const CLI_MAIN = join(fileURLToPath(new URL("../../", import.meta.url)), "dist/src/cli/main.js");

/** What a CLI process printed and how it exited. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the compiled CLI with exactly these arguments (no store is added) and collects its output. */
export function runCli(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string | undefined> = { ...process.env, ...options.env };
    if (!options.env?.CAIRN_STORE) delete env.CAIRN_STORE;
    const child = spawn(process.execPath, [CLI_MAIN, ...args], { cwd: options.cwd, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
