// Child processes that talk in lines on stdout: "progress <text>", "result <json>", and any other
// line a case listens for ("inflight", "mark <runId> <time>", …). stderr is kept (its tail is shown
// when the child fails) rather than printed, so peers' warnings do not break the progress display.
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { createInterface } from "node:readline";

/**
 * Spawns `node [nodeArgs] script [args]`. Returns { child, lines, stderr(), waitLine(test, ms), exited }.
 * `lines` emits "line" for each stdout line; `onProgress` gets the text of "progress" lines.
 */
export function startChild(script, { args = [], nodeArgs = [], env = {}, cwd, onProgress } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd,
    env: { ...process.env, CAIRN_LOG_LEVEL: "error", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const lines = new EventEmitter();
  lines.setMaxListeners(0);
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-8192);
  });
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (line.startsWith("progress ")) onProgress?.(line.slice("progress ".length));
    lines.emit("line", line);
  });
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const describeExit = (how) => `${script.split("/").at(-1)} (pid ${child.pid}) ${how}${stderr.trim() ? `; its stderr ended with:\n${stderr.trim().split("\n").slice(-12).join("\n")}` : ""}`;
  /** Resolves with the first stdout line for which test(line) is truthy; rejects on exit or timeout. */
  function waitLine(test, timeoutMs) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(describeExit(`printed no expected line within ${timeoutMs} ms`))), timeoutMs);
      const onLine = (line) => {
        if (test(line)) finish(null, line);
      };
      const onClose = (code, signal) => finish(new Error(describeExit(`exited (${signal ?? code})`)));
      function finish(error, line) {
        clearTimeout(timer);
        lines.off("line", onLine);
        child.off("close", onClose);
        if (error) reject(error);
        else resolve(line);
      }
      lines.on("line", onLine);
      child.once("close", onClose);
    });
  }
  /** The JSON of the child's "result" line; rejects if it exits without one. */
  async function result(timeoutMs) {
    const line = await waitLine((l) => l.startsWith("result "), timeoutMs);
    return JSON.parse(line.slice("result ".length));
  }
  /** SIGKILL, and wait for the exit. */
  async function kill() {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  }
  return { child, lines, stderr: () => stderr, waitLine, result, kill, exited };
}

/** For child scripts: report progress and the result to the parent. */
export const report = {
  progress: (text) => process.stdout.write(`progress ${text}\n`),
  result: (value) => process.stdout.write(`result ${JSON.stringify(value)}\n`),
};

/** For child scripts that may hang on purpose: exit when the parent goes away (stdin closes). */
export function exitWithParent() {
  process.stdin.on("end", () => process.exit(1));
  process.stdin.resume();
}
