import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { onCleanup } from "./engines.js";

const WORKER = resolve("test/fixtures/worker.mjs");

/** Fails clearly when the package was not built (the test command builds first). */
export function requireBuild(): void {
  if (!existsSync(resolve("dist/src/index.js"))) throw new Error("dist/ is missing: run `npm run build` (npm test does it for you).");
}

/** A worker child process running the fixture worker. */
export interface WorkerProcess {
  child: ChildProcess;
  /** Resolves with the worker id once it claims work. */
  ready: Promise<string>;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** Spawns a worker process; it is SIGKILLed after the test if still alive. */
export function spawnWorker(env: Record<string, string>): WorkerProcess {
  requireBuild();
  const child = spawn(process.execPath, [WORKER], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stderr!.on("data", (chunk) => (err += chunk));
  const ready = new Promise<string>((resolveReady, reject) => {
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const match = /ready (\S+)/.exec(out);
      if (match) resolveReady(match[1]!);
    });
    child.once("exit", (code, signal) => reject(new Error(`worker exited before ready (code ${code}, signal ${signal}): ${err}`)));
  });
  ready.catch(() => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.once("exit", (code, signal) => resolveExit({ code, signal })),
  );
  onCleanup(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, ready, exited, output: () => out + err };
}
