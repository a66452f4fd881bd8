// Spawns bench/worker.mjs processes and stops them.
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const WORKER = fileURLToPath(new URL("../worker.mjs", import.meta.url));

/**
 * Starts `count` worker processes on `url`, each with `concurrency`; resolves once all print "ready".
 * Each child gets `lines`, an EventEmitter of its stdout lines ("line"). `env` adds to the environment
 * (e.g. BENCH_POLL_INTERVAL), `nodeArgs` go before the script (e.g. --expose-gc).
 */
export async function spawnWorkers(url, count, concurrency, { readyTimeoutMs = 30_000, env = {}, nodeArgs = [] } = {}) {
  const children = Array.from({ length: count }, () => {
    const child = spawn(process.execPath, [...nodeArgs, WORKER], {
      env: { ...process.env, BENCH_STORE: url, BENCH_CONCURRENCY: String(concurrency), CAIRN_LOG_LEVEL: "error", ...env },
      stdio: ["pipe", "pipe", "inherit"],
    });
    child.lines = new EventEmitter();
    child.lines.setMaxListeners(0);
    createInterface({ input: child.stdout }).on("line", (line) => child.lines.emit("line", line));
    return child;
  });
  try {
    await Promise.all(children.map((child) => waitReady(child, readyTimeoutMs)));
  } catch (error) {
    await stopWorkers(children);
    throw error;
  }
  return children;
}

function waitReady(child, timeoutMs) {
  child.output = "";
  child.stdout.on("data", (chunk) => (child.output += chunk));
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`worker ${child.pid} not ready after ${timeoutMs}ms`)), timeoutMs);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (out.includes("ready\n")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`worker ${child.pid} exited (${signal ?? code}) before it was ready`));
    });
  });
}

/**
 * SIGTERM (drain), then SIGKILL whatever is still alive after `graceMs`. Resolves with each worker's
 * final stats (see worker.mjs), or null for a worker that printed none.
 */
export async function stopWorkers(children, { graceMs = 10_000 } = {}) {
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill("SIGTERM");
        }),
    ),
  );
  return children.map((child) => {
    const line = (child.output ?? "").split("\n").find((l) => l.startsWith("stats "));
    return line ? JSON.parse(line.slice("stats ".length)) : null;
  });
}
