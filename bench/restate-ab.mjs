// Cairn beside Restate, interleaved: rounds of [Cairn on SQLite, Cairn on PostgreSQL, Restate] on the
// 10-step workflow, sequential and 32 concurrent, each case right after the others so that all three
// meet the same machine load and the same disk (whose fsync rate drifts by 10× within minutes on a
// shared machine). Each round gives a ratio of figures measured seconds apart; and CPU time per step,
// which the load changes far less than steps/s: Cairn's in-process engine (engine, store, workflow
// code; on PostgreSQL the server's own CPU is not counted) against restate-server + the SDK endpoint
// process (which also runs the HTTP clients). Where Restate wins a row, this says whether it did
// less work per step or only waited less.
//   node bench/restate-ab.mjs [rounds (default 3)] [reps per case (default 3)]
// (needs npm run build and npm --prefix bench ci; PostgreSQL at BENCH_PG_URL, CAIRN_TEST_PG_URL or
// postgres://postgres@127.0.0.1:5432/test)
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { restateThroughputCase } from "./cases/peers.mjs";
import { throughputCase } from "./cases/throughput.mjs";
import { fmt, median } from "./lib/stats.mjs";
import { freshTarget } from "./lib/targets.mjs";

const rounds = Number(process.argv[2] ?? 3);
const reps = Number(process.argv[3] ?? 3);
const pgUrl = process.env.BENCH_PG_URL ?? process.env.CAIRN_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const dir = mkdtempSync(join(tmpdir(), "cairn-restate-ab-"));
const quiet = () => {};
const rows = [];

/** Cairn's throughput case in this process, with this process's CPU time per step (warm-up included). */
async function cairn(store, concurrency) {
  const target = freshTarget(store, { tmpDir: dir, pgUrl, name: `ab-${store}-${concurrency}-${rows.length}` });
  try {
    const before = process.cpuUsage();
    const out = await throughputCase(target.url, { concurrency, reps, targetSec: 1, onProgress: quiet });
    const cpu = process.cpuUsage(before);
    const workflows = (concurrency === 1 ? 10 : Math.max(2 * concurrency, 32)) + reps * out.runsPerRep;
    return { stepsPerSec: median(out.samples.stepsPerSec), cpuUs: (cpu.user + cpu.system) / (workflows * 10) };
  } finally {
    await target.cleanup();
  }
}

async function restate(concurrency) {
  const out = await restateThroughputCase({ concurrency, reps, targetSec: 1, onProgress: quiet });
  const { sdkProcess, server } = out.cpuPerStepUs;
  return { stepsPerSec: median(out.samples.stepsPerSec), cpuUs: sdkProcess + (server ?? Number.NaN), serverUs: server, sdkUs: sdkProcess };
}

try {
  for (let round = 1; round <= rounds; round++) {
    for (const concurrency of [1, 32]) {
      const load = loadavg()[0];
      process.stderr.write(`round ${round}/${rounds}, concurrency ${concurrency} (load ${fmt(load, 1)}): `);
      const sqlite = await cairn("sqlite", concurrency);
      const postgres = await cairn("postgres", concurrency);
      const peer = await restate(concurrency);
      rows.push({ round, concurrency, load, loadAfter: loadavg()[0], sqlite, postgres, restate: peer });
      process.stderr.write(`SQLite ${fmt(sqlite.stepsPerSec)}, PostgreSQL ${fmt(postgres.stepsPerSec)}, Restate ${fmt(peer.stepsPerSec)} steps/s\n`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const lines = [
  "| round | concurrent | load | Cairn SQLite steps/s (CPU µs/step) | Cairn PostgreSQL steps/s (CPU µs/step, engine only) | Restate steps/s (CPU µs/step: server + SDK) | SQLite ÷ Restate | PostgreSQL ÷ Restate |",
  "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
];
for (const r of rows) {
  lines.push(
    `| ${r.round} | ${r.concurrency} | ${fmt(r.load, 1)} → ${fmt(r.loadAfter, 1)} | ${fmt(r.sqlite.stepsPerSec)} (${fmt(r.sqlite.cpuUs, 0)}) | ${fmt(r.postgres.stepsPerSec)} (${fmt(r.postgres.cpuUs, 0)}) | ${fmt(r.restate.stepsPerSec)} (${fmt(r.restate.serverUs, 0)} + ${fmt(r.restate.sdkUs, 0)}) | ${fmt(r.sqlite.stepsPerSec / r.restate.stepsPerSec, 2)}× | ${fmt(r.postgres.stepsPerSec / r.restate.stepsPerSec, 2)}× |`,
  );
}
for (const concurrency of [1, 32]) {
  const of = rows.filter((r) => r.concurrency === concurrency);
  const m = (f) => median(of.map(f));
  lines.push(
    `| median | ${concurrency} | | ${fmt(m((r) => r.sqlite.stepsPerSec))} (${fmt(m((r) => r.sqlite.cpuUs), 0)}) | ${fmt(m((r) => r.postgres.stepsPerSec))} (${fmt(m((r) => r.postgres.cpuUs), 0)}) | ${fmt(m((r) => r.restate.stepsPerSec))} (${fmt(m((r) => r.restate.cpuUs), 0)}) | ${fmt(m((r) => r.sqlite.stepsPerSec / r.restate.stepsPerSec), 2)}× | ${fmt(m((r) => r.postgres.stepsPerSec / r.restate.stepsPerSec), 2)}× |`,
  );
}
process.stdout.write(`${lines.join("\n")}\n\n${JSON.stringify(rows)}\n`);
