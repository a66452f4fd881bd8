// A bench worker process: BENCH_STORE (store URL), BENCH_CONCURRENCY. Prints "ready" once claiming.
// On SIGTERM it drains, prints "stats {json}" (store calls and SQL statements since start) and exits;
// it also exits when its parent goes away (stdin closes).
import { createEngine, silentLogger } from "../dist/src/index.js";
import { countPgQueries, countStoreCalls } from "./lib/instrument.mjs";
import { quantile } from "./lib/stats.mjs";
import { workflows } from "./workflows.mjs";

const pgQueries = process.env.BENCH_STORE.startsWith("postgres") ? await countPgQueries() : null;
const engine = await createEngine({ store: process.env.BENCH_STORE, workflows, logger: silentLogger });
const storeCalls = countStoreCalls(engine.store);
const sqlAtStart = pgQueries?.snapshot() ?? 0;
const worker = engine.startWorker({ concurrency: Number(process.env.BENCH_CONCURRENCY ?? 32), pollInterval: 5 });
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
process.stdin.resume();
