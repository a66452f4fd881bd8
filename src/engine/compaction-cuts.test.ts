import { describe, expect, it } from "vitest";
import { sharedEngines, STORE_KINDS } from "../../test/support/engines.js";
import { planCompaction } from "../core/compaction.js";
import type { JournalEntry } from "../core/journal.js";
import { resumeView } from "../core/resume.js";
import { waitFor } from "../testing/wait-for.js";
import { defineWorkflow } from "./define-workflow.js";
import type { Engine } from "./engine.js";
import type { WorkflowContext } from "./workflow.js";

const fast = { pollInterval: 10 };

const helper = defineWorkflow({
  name: "cuts-helper",
  async run(ctx) {
    await ctx.waitForEvent("child-go");
    return 7;
  },
});

/** Ops issued before the loop and left open while it runs: their entries fall inside the range its snapshots supersede. */
const SIDES = {
  human: {
    issue: (ctx: WorkflowContext) => ctx.askHuman({ name: "side", question: "Go on?", options: ["yes", "no"] }).then((reply) => reply.option),
    kinds: ["human.requested", "human.answered"],
    async close(engine: Engine, runId: string) {
      await engine.respondToHuman(`${runId}:side#0`, { action: "answer", option: "yes", by: "ada" });
    },
  },
  child: {
    issue: (ctx: WorkflowContext) => ctx.child(helper, undefined, { runId: `${ctx.runId}-child`, name: "side" }),
    kinds: ["child.started", "child.completed"],
    async close(engine: Engine, runId: string) {
      await engine.sendEvent(`${runId}-child`, "child-go");
    },
  },
  event: {
    issue: (ctx: WorkflowContext) => ctx.waitForEvent<number>("side"),
    kinds: ["event.waiting", "event.received"],
    async close(engine: Engine, runId: string) {
      await engine.sendEvent(runId, "side", 3, { eventId: `${runId}-side` });
    },
  },
} as const;

type Side = keyof typeof SIDES;

function sideLoop(side: Side) {
  return defineWorkflow({
    name: `cuts-${side}`,
    async run(ctx) {
      const open = SIDES[side].issue(ctx);
      const sum = await ctx.loop(
        "l",
        { i: 0, sum: 0 },
        async (state, it) => {
          if (state.i === 4) await it.ctx.waitForEvent("mid");
          if (state.i === 14) await it.ctx.waitForEvent("go");
          const add = await it.ctx.step("add", () => state.i + 1);
          const next = { i: state.i + 1, sum: state.sum + add };
          return next.i === 20 ? it.done(next.sum) : next;
        },
        { snapshotEvery: 3 },
      );
      return { sum, side: await open };
    },
  });
}

async function waiting(engine: Engine, runId: string, what: string) {
  await waitFor(async () => (await engine.getRun(runId)).status === "suspended", { timeoutMs: 20_000, what: `${runId} waits for ${what}` });
}

/**
 * For every prefix of a journal (every moment a compaction could run) and every later prefix (every
 * moment a resume could read it): nothing compaction deletes is read by a resume.
 */
async function neverNeeded(journal: readonly JournalEntry[]): Promise<number> {
  let checked = 0;
  for (let p = 1; p <= journal.length; p++) {
    const plan = await planCompaction(journal.slice(0, p), Number.MAX_SAFE_INTEGER);
    if (!plan || plan.seqs.length === 0) continue;
    const doomed = new Set(plan.seqs);
    for (let q = p; q <= journal.length; q++) {
      const needed = (await resumeView(journal.slice(0, q))).filter((entry) => doomed.has(entry.seq));
      expect(
        needed.map((entry) => `${entry.seq} ${entry.kind} ${entry.opKey}`),
        `compacted at seq ${journal[p - 1]!.seq}, resumed at ${journal[q - 1]!.seq}`,
      ).toEqual([]);
      checked += 1;
    }
  }
  return checked;
}

describe.each(STORE_KINDS)("compaction never removes what a resume needs, on %s", (kind) => {
  const cases = (Object.keys(SIDES) as Side[]).flatMap((side) => (["mid-loop", "after-compaction"] as const).map((when) => ({ side, when })));

  it.each(cases)("an op open across the loop ($side, outcome $when): compacted, resumed elsewhere, same result as its twin", async ({ side, when }) => {
    const wf = sideLoop(side);
    const [first, second] = await sharedEngines(kind, [wf, helper], [wf, helper]);
    const worker = first!.startWorker(fast);
    for (const runId of ["compacted", "twin"]) await first!.start(wf, undefined, { runId });
    for (const runId of ["compacted", "twin"]) await waiting(first!, runId, "mid");
    // The op's outcome lands between two snapshots (kept by them), or only after the compaction.
    for (const runId of ["compacted", "twin"]) {
      if (when === "mid-loop") await SIDES[side].close(first!, runId);
      await first!.sendEvent(runId, "mid");
    }
    for (const runId of ["compacted", "twin"]) {
      await waitFor(async () => (await first!.store.readJournal(runId)).some((e) => e.kind === "event.waiting" && e.opKey?.includes("go#")), {
        what: `${runId} reaches go`,
      });
      await waiting(first!, runId, "go");
    }
    await worker.stop();
    const compacted = await first!.compact({ checkpointBefore: 0, runId: "compacted" });
    expect(compacted.entries).toBeGreaterThan(10);
    const journal = await first!.store.readJournal("compacted");
    // The side op's entries all stay, whatever snapshot covers them.
    const kinds = SIDES[side].kinds.slice(0, when === "mid-loop" ? 2 : 1);
    for (const k of kinds)
      expect(
        journal.some((e) => e.kind === k && e.opKey === "side#0"),
        k,
      ).toBe(true);

    second!.startWorker(fast);
    for (const runId of ["compacted", "twin"]) {
      if (when === "after-compaction") await SIDES[side].close(second!, runId);
      await second!.sendEvent(runId, "go");
    }
    const twin = await second!.result("twin", { timeoutMs: 20_000 });
    expect(twin).toMatchObject({ sum: 210 });
    expect(await second!.result("compacted", { timeoutMs: 20_000 })).toEqual(twin);
    expect(await second!.replay("compacted")).toMatchObject({ ok: true });
    // Every moment a compaction could have run, checked against every later resume (the twin has the whole journal).
    expect(await neverNeeded(await second!.store.readJournal("twin"))).toBeGreaterThan(50);
  });
});
