// Large values against a real `cairn serve` child process (SQLite file): listings, journal pages
// and exports of runs with 1 MiB inputs, outputs and step results, many at once. The child's
// memory (VmRSS from /proc) must stay bounded, every response bounded or streamed, and /health
// must answer promptly throughout. The typed client fetches an elided value whole.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defineWorkflow } from "../src/index.js";
import { createEngine } from "../src/engine/create-engine.js";
import { silentLogger } from "../src/engine/logger.js";
import { CairnClient } from "../src/client/client.js";
import { waitFor } from "../src/testing/wait-for.js";
import { onCleanup } from "./support/engines.js";
import { spawnServe } from "./support/serve-process.js";

const MIB = 1024 * 1024;
const RUNS = 12;
const STEPS = 32;

const bulky = defineWorkflow({
  name: "bulky",
  version: "1",
  async run(ctx, input: { i: number; blob: string }) {
    return ctx.step("make", () => `out-${input.i}:`.padEnd(MIB, "o"));
  },
});

const journaly = defineWorkflow({
  name: "journaly",
  version: "1",
  async run(ctx) {
    for (let i = 0; i < STEPS; i++) await ctx.step("chunk", () => `step-${i}:`.padEnd(MIB, "s"));
    return "done";
  },
});

/** Resident memory of a process, from /proc (bytes). */
function rss(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!match) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

describe.skipIf(process.platform !== "linux")("bounded memory of cairn serve with 1 MiB values", () => {
  it(
    "listings, journal pages and exports of large runs, 20 at once: bounded memory, bounded or streamed bodies, /health answers",
    { timeout: 120_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "cairn-bounded-"));
      onCleanup(() => rmSync(dir, { recursive: true, force: true })); // about 100 MB
      const store = `sqlite:${join(dir, "cairn.db")}`;
      const filler = await createEngine({ store, logger: silentLogger, workflows: [bulky, journaly] });
      const worker = filler.startWorker({ pollInterval: 5, concurrency: 8 });
      for (let i = 0; i < RUNS; i++) await filler.start(bulky, { i, blob: `in-${i}:`.padEnd(MIB, "i") }, { runId: `bulky-${i}` });
      await filler.start(journaly, null, { runId: "journaly" });
      await waitFor(async () => (await filler.listRuns({ status: "completed", limit: 100 })).runs.length === RUNS + 1, { timeoutMs: 60_000 });
      await worker.stop({ drain: true });
      await filler.close();

      const cairn = await spawnServe(["--store", store, "--no-worker"]);
      const pid = cairn.child.pid!;
      const get = async (path: string) => {
        const res = await fetch(`${cairn.url}${path}`);
        const body = Buffer.from(await res.arrayBuffer());
        return { status: res.status, bytes: body.length, length: res.headers.get("content-length"), text: () => body.toString("utf8") };
      };
      expect((await get("/health")).status).toBe(200);
      expect((await get("/runs?limit=1000")).status).toBe(200);
      const before = rss(pid);

      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 20);
      let loading = true;
      const healthTimes: number[] = [];
      const prober = (async () => {
        while (loading) {
          const started = Date.now();
          expect((await get("/health")).status).toBe(200);
          healthTimes.push(Date.now() - started);
        }
      })();
      const load = [
        ...Array.from({ length: 8 }, () => get("/runs?limit=1000")),
        ...Array.from({ length: 8 }, () => get("/runs/journaly/journal?limit=1000")),
        ...Array.from({ length: 4 }, () => get("/runs/journaly/export")),
      ];
      const answers = await Promise.all(load);
      loading = false;
      await prober;
      clearInterval(sampler);
      peak = Math.max(peak, rss(pid));

      const [lists, pages, exports] = [answers.slice(0, 8), answers.slice(8, 16), answers.slice(16)];
      for (const list of lists) {
        expect(list.status).toBe(200);
        expect(list.bytes).toBeLessThan(256 * 1024); // 13 runs with up to 2 MiB each, as previews
      }
      for (const page of pages) {
        expect(page.status).toBe(200);
        expect(page.bytes).toBeLessThan(256 * 1024);
        expect(page.length).toBeNull(); // streamed (chunked), not built as one string
      }
      for (const exported of exports) {
        expect(exported.status).toBe(200);
        expect(exported.length).toBeNull(); // streamed
        expect(exported.bytes).toBeGreaterThan(STEPS * MIB);
        const file = JSON.parse(exported.text()) as { format: string; journal: { seq: number }[] };
        expect(file.format).toBe("cairn.run-export");
        expect(file.journal.map((e) => e.seq)).toEqual(file.journal.map((_, i) => i + 1));
      }
      // 4 exports of a 32 MiB run at once: the rows are read (40 MiB each), but never again as one JSON string and its bytes.
      const grew = peak - before;
      expect(grew, `RSS grew by ${Math.round(grew / MIB)} MiB (from ${Math.round(before / MIB)} MiB)`).toBeLessThan(300 * MIB); // before streaming: about 450 MiB, and /health waited 7 s
      expect(healthTimes.length).toBeGreaterThan(0);
      // Generous for a loaded 2-core machine: before streaming, one probe waited for whole exports (seconds).
      const sorted = [...healthTimes].sort((a, b) => a - b);
      expect(sorted[Math.floor(sorted.length / 2)], `/health answered in ${healthTimes.join(", ")} ms`).toBeLessThan(500);
      expect(sorted[sorted.length - 1], `/health answered in ${healthTimes.join(", ")} ms`).toBeLessThan(3000);

      // The typed client fetches an elided value whole: a run's input and output, a journal entry's data.
      const client = new CairnClient({ baseUrl: cairn.url });
      const listed = (await client.listRuns({ workflow: "bulky", limit: 100 })).runs.find((r) => r.runId === "bulky-3")!;
      expect(listed.input).toBeNull();
      expect(listed.elided?.input).toBeGreaterThan(MIB);
      expect(((await client.wholeValue("bulky-3", "input")) as { blob: string }).blob).toBe("in-3:".padEnd(MIB, "i"));
      expect(await client.wholeValue("bulky-3", "output")).toBe("out-3:".padEnd(MIB, "o"));
      const page = await client.journal("journaly", { limit: 1000 });
      const elided = page.entries.find((e) => e.kind === "step.completed" && e.elided !== undefined)!;
      expect(elided.data).toBeNull();
      const whole = (await client.wholeValue("journaly", { seq: elided.seq })) as { result: string };
      expect(whole.result).toMatch(/^step-\d+:s+$/);
      expect(whole.result).toHaveLength(MIB);
    },
  );
});
