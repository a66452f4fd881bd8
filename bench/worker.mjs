// A bench worker process: BENCH_STORE (store URL), BENCH_CONCURRENCY, BENCH_POLL_INTERVAL (ms, default
// 5; "default" leaves the engine's own). Prints "ready" once claiming, and "mark <runId> <epoch ms>"
// when a bench-wake run's step starts. A line "memory" on stdin makes it collect garbage (when run with
// --expose-gc) and print "memory {json}" (process.memoryUsage() and its claim-query times so far).
// On SIGTERM it drains, prints "stats {json}" (store calls and SQL statements since start) and exits;
// it also exits when its parent goes away (stdin closes).
import { createInterface } from "node:readline";
import { createEngine, silentLogger } from "../dist/src/index.js";
import { countPgQueries, countStoreCalls } from "./lib/instrument.mjs";
import { quantile } from "./lib/stats.mjs";
import { hooks, workflows } from "./workflows.mjs";

const pgQueries = process.env.BENCH_STORE.startsWith("postgres") ? await countPgQueries() : null;
const engine = await createEngine({ store: process.env.BENCH_STORE, workflows, logger: silentLogger });
const storeCalls = countStoreCalls(engine.store);
const sqlAtStart = pgQueries?.snapshot() ?? 0;
hooks.stepEntered = (runId) => process.stdout.write(`mark ${runId} ${performance.timeOrigin + performance.now()}\n`);
const claimMs = timeClaims(engine.store);
const poll = process.env.BENCH_POLL_INTERVAL ?? "5";
const worker = engine.startWorker({ concurrency: Number(process.env.BENCH_CONCURRENCY ?? 32), ...(poll === "default" ? {} : { pollInterval: Number(poll) }) });
process.stdout.write("ready\n");

let stopping = false;
async function stop(code) {
  if (stopping) return;
  stopping = true;
  await worker.stop({ drain: true }).catch(() => undefined);
  const commitMs = storeCalls.commitMs();
  const stats = { storeCalls: storeCalls.snapshot(), sqlStatements: pgQueries ? pgQueries.snapshot() - sqlAtStart : null, commitP50Ms: quantile(commitMs, 0.5) };
  process.stdout.write(`stats ${JSON.stringify(stats)}\n`);
  await engine.close().catch(() => undefined);
  process.exit(code);
}
process.on("SIGTERM", () => void stop(0));
process.stdin.on("end", () => void stop(1));
createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() !== "memory") return;
  for (let i = 0; i < 3; i++) globalThis.gc?.();
  process.stdout.write(`memory ${JSON.stringify({ ...process.memoryUsage(), gc: typeof globalThis.gc === "function", claims: claimMs.splice(0) })}\n`);
});

/** Times every claimRuns call (ms), on top of the counting wrapper. */
function timeClaims(store) {
  const times = [];
  const original = store.claimRuns;
  store.claimRuns = async (...args) => {
    const start = performance.now();
    try {
      return await original.apply(store, args);
    } finally {
      if (times.length < 100_000) times.push(performance.now() - start);
    }
  };
  return times;
}
