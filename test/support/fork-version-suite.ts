import { expect, it } from "vitest";
import { defineWorkflow } from "../../src/engine/define-workflow.js";
import type { Engine, EngineOptions } from "../../src/engine/engine.js";
import { onCleanup } from "./engines.js";
import { testServer } from "./server.js";

/** The same workflow as deployed twice: version 2 changed what step "b" returns. */
const deploy = (version: "1" | "2", calls: string[]) =>
  defineWorkflow({
    name: "deploy",
    version,
    async run(ctx) {
      const a = await ctx.step("a", () => (calls.push(`a@${version}`), `a from v${version}`));
      const b = await ctx.step("b", () => (calls.push(`b@${version}`), `b from v${version}`));
      return { a, b };
    },
  });

/**
 * A fork continues under current code: a run made under version 1, forked by an engine that runs
 * version 2, is pinned to version 2, replays the kept entries and runs the rest with version 2's code;
 * the API shows where it was forked from. `makeEngines` gives engines on one shared store.
 */
export function forkVersionSuite(makeEngines: (...sets: EngineOptions["workflows"][]) => Promise<Engine[]>): void {
  it("a fork of a run made under version 1 runs under version 2 code, and shows forkedFrom", async () => {
    const calls: string[] = [];
    const [v1, v2] = await makeEngines([deploy("1", calls)], [deploy("2", calls)]);
    const w1 = v1!.startWorker({ pollInterval: 10 });
    onCleanup(() => w1.stop());
    const original = await v1!.start("deploy", null, { runId: "orig" });
    expect(await original.result({ timeoutMs: 10_000 })).toEqual({ a: "a from v1", b: "b from v1" });
    const before = await v1!.getRun("orig");
    const atSeq = (await v1!.journal("orig")).find((e) => e.kind === "step.completed" && e.opKey === "a#0")!.seq;

    calls.length = 0;
    const w2 = v2!.startWorker({ pollInterval: 10 });
    onCleanup(() => w2.stop());
    const fork = await v2!.fork("orig", { atSeq, runId: "fork" });
    expect(await fork.result({ timeoutMs: 10_000 })).toEqual({ a: "a from v1", b: "b from v2" });
    expect(calls).toEqual(["b@2"]); // step a was replayed, not run again
    const info = await v2!.getRun("fork");
    expect(info.version).toBe("2");
    expect(info.forkedFrom).toEqual({ runId: "orig", atSeq, version: "1" });
    expect((await v2!.journal("fork")).find((e) => e.kind === "run.forked")?.data).toEqual({ fromRunId: "orig", atSeq, fromVersion: "1" });
    // The original is untouched.
    expect(await v2!.getRun("orig")).toEqual(before);
    expect(before.forkedFrom).toBeUndefined();

    // Forking again the same way is the same fork; through the API, forkedFrom is visible.
    expect((await v2!.fork("orig", { atSeq, runId: "fork" })).created).toBe(false);
    const server = await testServer(v2!);
    const body = (await (await fetch(`${server.url}/runs/fork`)).json()) as { version: string; forkedFrom: unknown };
    expect(body).toMatchObject({ version: "2", forkedFrom: { runId: "orig", atSeq, version: "1" } });
    const listed = (await (await fetch(`${server.url}/runs`)).json()) as { runs: { runId: string; forkedFrom?: unknown }[] };
    expect(listed.runs.find((r) => r.runId === "fork")?.forkedFrom).toEqual({ runId: "orig", atSeq, version: "1" });
  });

  it("a fork by an engine that runs the same version keeps it and names no version in forkedFrom", async () => {
    const calls: string[] = [];
    const [engine] = await makeEngines([deploy("1", calls)]);
    const worker = engine!.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    await (await engine!.start("deploy", null, { runId: "o" })).result({ timeoutMs: 10_000 });
    const fork = await engine!.fork("o", { atSeq: 2, runId: "f" });
    await fork.result({ timeoutMs: 10_000 });
    expect(await engine!.getRun("f")).toMatchObject({ version: "1", forkedFrom: { runId: "o", atSeq: 2 } });
    expect((await engine!.getRun("f")).forkedFrom).not.toHaveProperty("version");
  });
}
