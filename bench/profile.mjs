// Where the time goes: runs one throughput case under the V8 CPU profiler and prints the functions
// with the most self time, grouped by file.
//   node bench/profile.mjs [memory|sqlite|postgres] [concurrency] [--pg-url URL]
// Writes the full profile to bench/out/<store>-c<concurrency>.cpuprofile (open it in Chrome DevTools).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { throughputCase } from "./cases/throughput.mjs";
import { fmt } from "./lib/stats.mjs";
import { freshTarget } from "./lib/targets.mjs";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { "pg-url": { type: "string", default: process.env.BENCH_PG_URL ?? process.env.CAIRN_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test" } },
});
const store = positionals[0] ?? "sqlite";
const concurrency = Number(positionals[1] ?? 256);
const root = fileURLToPath(new URL("..", import.meta.url));
const tmpDir = mkdtempSync(join(tmpdir(), "cairn-profile-"));
const target = freshTarget(store, { tmpDir, pgUrl: values["pg-url"], name: "profile" });

const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 200 });
await session.post("Profiler.start");
let result;
try {
  result = await throughputCase(target.url, { concurrency, reps: 3, targetSec: 1.5, onProgress: (text) => process.stderr.write(`${text}\n`) });
} finally {
  await target.cleanup();
  rmSync(tmpDir, { recursive: true, force: true });
}
const { profile } = await session.post("Profiler.stop");
session.disconnect();

const outDir = fileURLToPath(new URL("./out/", import.meta.url));
mkdirSync(outDir, { recursive: true });
const file = join(outDir, `${store}-c${concurrency}.cpuprofile`);
writeFileSync(file, JSON.stringify(profile));

// Self time per node = samples hitting it × interval.
const hits = new Map();
for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
const total = profile.samples.length;
const byFunction = new Map();
const byFile = new Map();
for (const node of profile.nodes) {
  const count = hits.get(node.id) ?? 0;
  if (count === 0) continue;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? relative(root, url.startsWith("file://") ? fileURLToPath(url) : url) : `(${functionName || "native"})`;
  const key = `${functionName || "(anonymous)"}  ${where}:${lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + count);
  const group = where.startsWith("node_modules/") ? where.split("/").slice(0, 2).join("/") : where.startsWith("dist/") ? where : where.startsWith("node:") ? "node internals" : where;
  byFile.set(group, (byFile.get(group) ?? 0) + count);
}
const pct = (n) => `${fmt((n * 100) / total, 1)}%`;
const top = (map, n) => [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
process.stdout.write(`${store} c${concurrency}: ${fmt(result.samples.stepsPerSec.at(-1))} steps/s in the last repetition; ${total} samples\n\nself time by file:\n`);
for (const [name, count] of top(byFile, 15)) process.stdout.write(`  ${pct(count).padStart(6)}  ${name}\n`);
process.stdout.write("\nself time by function:\n");
for (const [name, count] of top(byFunction, 25)) process.stdout.write(`  ${pct(count).padStart(6)}  ${name}\n`);
process.stdout.write(`\nfull profile: ${relative(root, file)}\n`);
