// Where a sequential workflow's PostgreSQL time goes, statement by statement: runs the throughput
// workflow (10 trivial steps) one at a time on a fresh schema and counts every statement the `pg`
// client sends, each one round trip to the server, grouped by its first words.
//   node bench/round-trips.mjs [--runs N] [--pg-url URL]      (npm run build first)
// A sequential step waits for each of these in turn; the ones that commit also wait for a WAL flush.
import { parseArgs } from "node:util";
import { createEngine, silentLogger } from "../dist/src/index.js";
import { loadPg } from "./lib/pg.mjs";
import { freshTarget } from "./lib/targets.mjs";
import { STEPS, tenSteps } from "./workflows.mjs";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "50" },
    "pg-url": { type: "string", default: process.env.BENCH_PG_URL ?? process.env.CAIRN_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test" },
    help: { type: "boolean", short: "h", default: false },
  },
});
if (values.help) {
  process.stdout.write("node bench/round-trips.mjs [--runs N] [--pg-url URL]: PostgreSQL statements per sequential 10-step workflow, by kind\n");
  process.exit(0);
}
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs takes a positive whole number (got ${values.runs})`);

const pg = await loadPg();
const target = freshTarget("postgres", { pgUrl: values["pg-url"], name: "round-trips" });
const engine = await createEngine({ store: target.url, workflows: [tenSteps], logger: silentLogger });
const sent = [];
try {
  engine.startWorker();
  for (let i = 0; i < 5; i++) await (await engine.start(tenSteps, null)).result(); // warm-up: prepared statements, pool
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function counted(...args) {
    const query = args[0];
    sent.push(typeof query === "string" ? query : String(query?.text ?? query));
    return original.apply(this, args);
  };
  try {
    for (let i = 0; i < runs; i++) await (await engine.start(tenSteps, null)).result();
  } finally {
    pg.Client.prototype.query = original;
  }
} finally {
  await engine.close();
  await target.cleanup();
}

const byKind = new Map();
for (const text of sent) {
  const kind = text.replace(/\s+/g, " ").trim().slice(0, 72);
  byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
}
process.stdout.write(`PostgreSQL round trips per sequential ${STEPS}-step workflow (mean of ${runs}): ${(sent.length / runs).toFixed(2)}\n\n`);
process.stdout.write("| per workflow | statement (first words) |\n| ---: | --- |\n");
for (const [kind, count] of [...byKind].sort((a, b) => b[1] - a[1])) {
  process.stdout.write(`| ${(count / runs).toFixed(2)} | \`${kind.replaceAll("|", "\\|").replaceAll("`", "'")}\` |\n`);
}
