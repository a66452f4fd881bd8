// CPU time, to say where a case's time goes: this process's (process.cpuUsage) and, when the
// PostgreSQL server runs on this machine, the server's (every `postgres` process in /proc, summed).
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

let ticksPerSec;

/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK; 100 if it cannot be read). */
function clockTicks() {
  if (ticksPerSec === undefined) {
    try {
      ticksPerSec = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSec = 100;
    }
  }
  return ticksPerSec;
}

/** Whether a PostgreSQL URL names a server on this machine (so its processes are in /proc). */
export function isLocalPg(url) {
  try {
    const host = new URL(url).hostname;
    return host === "127.0.0.1" || host === "localhost" || host === "::1" || host === "[::1]";
  } catch {
    return false;
  }
}

/** CPU microseconds (user + system) used so far by every live `postgres` process; null without /proc. */
export function postgresCpuUs() {
  let pids;
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  let ticks = 0;
  for (const pid of pids) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // gone meanwhile
    }
    const close = stat.lastIndexOf(")");
    if (!stat.slice(stat.indexOf("(") + 1, close).startsWith("postgres")) continue;
    const fields = stat.slice(close + 2).split(" "); // fields from the 3rd (state) on
    ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (14th and 15th)
  }
  return (ticks / clockTicks()) * 1e6;
}

/** Starts a CPU measurement; `stop(steps)` returns µs per step of this process and of the local PostgreSQL server (or null). */
export function cpuMeter({ server }) {
  const own = process.cpuUsage();
  const serverStart = server ? postgresCpuUs() : null;
  return {
    stop(steps) {
      const used = process.cpuUsage(own);
      const serverEnd = serverStart === null ? null : postgresCpuUs();
      return {
        engineUsPerStep: (used.user + used.system) / steps,
        serverUsPerStep: serverStart === null || serverEnd === null ? null : (serverEnd - serverStart) / steps,
      };
    },
  };
}
