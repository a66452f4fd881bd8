import { describe, expect, it } from "vitest";
import { testEngine } from "../../test/support/engines.js";
import { planViews } from "../agent/plan-view.js";
import { runPlan } from "../agent/plan.js";
import { defineWorkflow } from "../engine/define-workflow.js";
import { planTree, planTrees } from "./plan-format.js";

describe("plan rendering for cairn show", () => {
  it("draws a plan from the journal as a tree with statuses, results, errors and skip reasons", async () => {
    const wf = defineWorkflow({
      name: "drawn",
      run: (ctx) =>
        runPlan(ctx, "p", [
          { id: "fetch", run: () => "page" },
          {
            id: "parse",
            deps: ["fetch"],
            options: { retry: { maxAttempts: 1 } },
            run: () => {
              throw new Error("malformed page");
            },
          },
          { id: "index", deps: ["parse"], run: () => 1 },
          { id: "report", deps: ["index", "fetch"], label: "write the report", run: () => 1 },
          { id: "other", run: () => 1 },
          { id: "other2", deps: ["other"], run: () => 2 },
        ]),
    });
    const engine = await testEngine("memory", { workflows: [wf] });
    engine.startWorker({ pollInterval: 10 });
    await engine.start(wf, undefined, { runId: "draw" });
    await engine.result("draw", { timeoutMs: 5000 });
    const views = planViews(await engine.journal("draw"));
    expect(planTrees(views)).toEqual([
      "plan p: 3 done · 1 failed · 2 skipped",
      '├─ ✓ fetch  done → "page"',
      "│  └─ ✗ parse  failed: Error: malformed page",
      "│     └─ – index  skipped (parse did not succeed)",
      "│        └─ – report  skipped (index did not succeed)  [write the report; also after fetch]",
      "└─ ✓ other  done → 1",
      "   └─ ✓ other2  done → 2",
    ]);
  });

  it("shows pending and running nodes, revisions and child runs", () => {
    const view = {
      name: "live",
      opKey: "plan-live#0",
      state: {
        name: "live",
        revision: 1,
        removed: [],
        nodes: [
          { id: "a", deps: [], kind: "step" as const, status: "running" as const },
          { id: "b", deps: ["a"], kind: "child" as const, workflow: "sub", status: "pending" as const },
        ],
      },
    };
    expect(planTree(view)).toEqual(["plan live (revision 1): 1 running · 1 pending", "└─ ▶ a  running", "   └─ ○ b  pending  [child sub]"]);
    expect(planTrees([])).toEqual([]);
  });
});
