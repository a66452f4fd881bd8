import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { waitFor } from "../../src/testing/wait-for.js";
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

/** Spawns a worker process (the fixture worker, or `script`); it is SIGKILLed after the test if still alive. */
export function spawnWorker(env: Record<string, string>, script = WORKER): WorkerProcess {
  requireBuild();
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
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

/** What a crash test does while a worker runs: `tick` plays the people (answers questions), `done` says the run finished. */
export interface Supervision {
  env: Record<string, string>;
  tick(): Promise<void>;
  done(): Promise<boolean>;
}

/** Runs `tick` until `worker` dies or the run is done: the signal ("SIGKILL"), "exit N", or "done". */
export function supervise(worker: WorkerProcess, s: Supervision): Promise<string> {
  return waitFor(
    async () => {
      await s.tick();
      if (worker.child.signalCode ?? worker.child.exitCode !== null) return worker.child.signalCode ?? `exit ${worker.child.exitCode}`;
      return (await s.done()) ? "done" : false;
    },
    { timeoutMs: 30_000, what: "the worker to crash or the run to finish" },
  );
}

/** Workers armed to SIGKILL themselves at the point's 1st, 2nd, 3rd hit, until one finishes: how many crashed. */
export async function crashAtPoint(s: Supervision, point: string, match: string): Promise<number> {
  let crashes = 0;
  for (let hit = 1; hit <= 3; hit++) {
    const worker = spawnWorker({ ...s.env, CAIRN_CRASH_AT: `${point}:${hit}`, CAIRN_CRASH_MATCH: match });
    await worker.ready.catch(() => undefined);
    if ((await supervise(worker, s)) === "SIGKILL") {
      crashes += 1;
      continue;
    }
    worker.child.kill("SIGTERM");
    await worker.exited;
    break;
  }
  return crashes;
}

/** Workers SIGKILLed at random moments (after 20–`maxMs` ms), `rounds` at most, until the run is done: how many were killed. */
export async function killAtRandom(s: Supervision, env: Record<string, string>, rounds: number, maxMs: number): Promise<number> {
  let kills = 0;
  for (let round = 0; round < rounds && !(await s.done()); round++) {
    const worker = spawnWorker({ ...s.env, ...env });
    await worker.ready;
    const killer = setTimeout(() => worker.child.kill("SIGKILL"), 20 + Math.floor(Math.random() * maxMs));
    await supervise(worker, s);
    clearTimeout(killer);
    if (worker.child.signalCode === "SIGKILL") kills += 1;
    else worker.child.kill("SIGTERM");
    await worker.exited;
  }
  return kills;
}

/** Finishes the run with a worker nobody kills. */
export async function finishCleanly(s: Supervision): Promise<void> {
  if (await s.done()) return;
  const worker = spawnWorker(s.env);
  await worker.ready;
  await supervise(worker, s);
  worker.child.kill("SIGTERM");
  await worker.exited;
}
