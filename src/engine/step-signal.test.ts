import { describe, expect, it } from "vitest";
import { STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { defineWorkflow } from "./define-workflow.js";
import type { StepInfo } from "./workflow.js";

describe.each(STORE_KINDS)("a step's signal on %s", (kind) => {
  it("is the same aborted signal whether the step reads it while running or only after the run finished", async () => {
    const infos: StepInfo[] = [];
    let early: AbortSignal | undefined;
    const wf = defineWorkflow({
      name: "step-signal",
      async run(ctx, input: { read: boolean }) {
        if (input.read) {
          await ctx.step("reads", (info) => {
            early = info.signal;
            return early.aborted;
          });
        }
        await ctx.step("keeps", (info) => void infos.push(info));
        return "done";
      },
    });
    const engine = await testEngine(kind, { workflows: [wf] });
    engine.startWorker({ pollInterval: 10 });
    // Never read while the run ran: made when first read, already aborted with the run's reason.
    expect(await (await engine.start(wf, { read: false }, { runId: "late" })).result({ timeoutMs: 5000 })).toBe("done");
    const late = infos[0]!.signal;
    expect(late.aborted).toBe(true);
    expect((late.reason as Error).message).toBe("workflow finished");
    // Read while running: the same signal, aborted as the run finished.
    expect(await (await engine.start(wf, { read: true }, { runId: "early" })).result({ timeoutMs: 5000 })).toBe("done");
    expect(infos[1]!.signal).toBe(early);
    expect(early!.aborted).toBe(true);
    expect((early!.reason as Error).message).toBe("workflow finished");
  });
});
