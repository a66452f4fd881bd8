import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../test/support/engines.js";
import { paced, testServer } from "../../test/support/server.js";
import { waitFor } from "../testing/wait-for.js";

const MIB = "x".repeat(1024 * 1024);

describe("listings of large payloads are bounded", () => {
  it("GET /runs and a journal page elide values above 8 KiB and cap pages in bytes; whole values are a route away", async () => {
    const engine = await testEngine("sqlite", { workflows: [paced] });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    const server = await testServer(engine);
    const get = async (path: string) => {
      const res = await fetch(`${server.url}${path}`);
      const text = await res.text();
      return { status: res.status, bytes: Buffer.byteLength(text), body: JSON.parse(text) as any };
    };
    for (let i = 0; i < 12; i++) await engine.start(paced, { steps: 1, big: MIB } as never, { runId: `big-${i}` });
    await engine.start(paced, { steps: 1 }, { runId: "small" });
    for (let i = 0; i < 12; i++) await engine.sendEvent("big-0", `e${i}`, { blob: MIB });
    await waitFor(async () => (await engine.getRun("big-0")).status === "suspended");

    const runs = await get("/runs?limit=1000");
    expect(runs.status).toBe(200);
    expect(runs.bytes).toBeLessThan(64 * 1024); // 13 MiB of inputs before
    expect(runs.body.runs).toHaveLength(13);
    const big = runs.body.runs.find((r: any) => r.runId === "big-3");
    expect(big.input).toBeNull();
    expect(big.elided.input).toBeGreaterThan(1024 * 1024);
    expect(runs.body.runs.find((r: any) => r.runId === "small")).toMatchObject({ input: { steps: 1 } });
    expect((await get("/runs/big-3")).body.input.big).toBe(MIB);

    // The journal: entries above 8 KiB are elided and fetched whole from their own route.
    const journal = await get("/runs/big-0/journal");
    expect(journal.status).toBe(200);
    expect(journal.bytes).toBeLessThan(64 * 1024);
    const created = journal.body.entries[0];
    expect(created).toMatchObject({ seq: 1, kind: "run.created", data: null });
    expect(created.elided).toBeGreaterThan(1024 * 1024);
    const whole = await get("/runs/big-0/journal/1");
    expect(whole.body.data.input.big).toBe(MIB);
    expect((await get("/runs/big-0/journal/999")).body.error.code).toBe("JOURNAL_ENTRY_NOT_FOUND");

    // Health answers while 8 large listings run at once.
    const listings = Array.from({ length: 8 }, () => get("/runs?limit=1000"));
    expect((await get("/health")).status).toBe(200);
    for (const listing of await Promise.all(listings)) expect(listing.bytes).toBeLessThan(64 * 1024);
  });
});
