import { describe, expect, it } from "vitest";
import { onCleanup, STORE_KINDS, storeUrl } from "../../test/support/engines.js";
import type { Store } from "../core/store.js";
import { openStore } from "../store/open-store.js";
import { createEngine } from "./create-engine.js";
import { defineWorkflow } from "./define-workflow.js";
import { silentLogger } from "./logger.js";
import { waitFor } from "../testing/wait-for.js";

/** The store, with a count of the run reads (rows and journal) made through it. */
function countingReads(store: Store): { store: Store; reads: () => number } {
  let reads = 0;
  const counted = new Set<PropertyKey>(["getRun", "readJournal", "readJournalForResume"]);
  const proxy = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== "function") return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      return counted.has(key) ? (...args: unknown[]) => (reads++, bound(...args)) : bound;
    },
  });
  return { store: proxy, reads: () => reads };
}

describe.each(STORE_KINDS)("result() on %s", (kind) => {
  it("answers from the execution that completed the run here, without reading the run back", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const wf = defineWorkflow({
      name: "gated",
      async run(ctx, input: { n: number }) {
        const n = await ctx.step("wait", async () => (await gate, input.n + 1));
        return { n, at: new Date(0), tags: new Set(["a"]) };
      },
    });
    const opened = await openStore(storeUrl(kind));
    const { store, reads } = countingReads(opened);
    const engine = await createEngine({ store, workflows: [wf], logger: silentLogger });
    onCleanup(async () => {
      await engine.close();
      await opened.close();
    });
    engine.startWorker({ pollInterval: 10 });
    const run = await engine.start(wf, { n: 41 });
    const start = reads();
    const [first, second] = [run.result({ timeoutMs: 10_000 }), run.result({ timeoutMs: 10_000 })];
    // Both waiters have read the running row once; then the run completes in this process.
    await waitFor(() => reads() >= start + 2);
    const before = reads();
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(reads()).toBe(before);
    expect(a).toEqual({ n: 42, at: new Date(0), tags: new Set(["a"]) });
    // Each waiter gets its own copy, decoded from the journaled output, as from the store.
    expect(b).toEqual(a);
    expect(b).not.toBe(a);
    // The same value the store holds.
    expect((await engine.getRun(run.runId)).output).toEqual(a);
    expect(await run.result()).toEqual(a);
    // A run this engine executes now is not finished: a quick one's result costs no read at all.
    const quick = await engine.start(wf, { n: 1 });
    const before2 = reads();
    expect(await quick.result({ timeoutMs: 10_000 })).toMatchObject({ n: 2 });
    expect(reads()).toBe(before2);
  });
});
