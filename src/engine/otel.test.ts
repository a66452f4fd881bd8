import { describe, expect, it } from "vitest";
import { testEngine } from "../../test/support/engines.js";
import { defineWorkflow } from "./define-workflow.js";
import { openTelemetryObserver, type OtelApiLike, type OtelSpanLike } from "./otel.js";

interface FakeSpan extends OtelSpanLike {
  name: string;
  attributes: Record<string, unknown>;
  status?: { code: number; message?: string };
  parent?: FakeSpan;
  ended: boolean;
}

/** A stand-in for `@opentelemetry/api` that records spans. */
function fakeApi(): { api: OtelApiLike; spans: FakeSpan[] } {
  const spans: FakeSpan[] = [];
  const api: OtelApiLike = {
    trace: {
      getTracer: () => ({
        startSpan(name, options, context) {
          const span: FakeSpan = {
            name,
            attributes: { ...options?.attributes },
            ended: false,
            ...(context ? { parent: (context as { span: FakeSpan }).span } : {}),
            setAttribute(key, value) {
              span.attributes[key] = value;
            },
            setStatus(status) {
              span.status = status;
            },
            end() {
              span.ended = true;
            },
          };
          spans.push(span);
          return span;
        },
      }),
      setSpan: (_context, span) => ({ span }),
    },
    context: { active: () => ({}) },
    SpanStatusCode: { ERROR: 2 },
  };
  return { api, spans };
}

describe("openTelemetryObserver", () => {
  it("records a span per execution and, inside it, one per step attempt", async () => {
    const wf = defineWorkflow({
      name: "traced",
      async run(ctx) {
        await ctx.step("a", () => 1);
        await ctx.step(
          "b",
          ({ attempt }) => {
            if (attempt === 1) throw new Error("once");
            return 2;
          },
          { retry: { maxAttempts: 2, initialDelay: 1 } },
        );
        return "ok";
      },
    });
    const { api, spans } = fakeApi();
    const engine = await testEngine("memory", { workflows: [wf], observer: await openTelemetryObserver({ api }) });
    engine.startWorker({ pollInterval: 10 });
    await (await engine.start(wf, undefined, { runId: "t1" })).result({ timeoutMs: 5000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const run = spans.find((s) => s.name === "cairn.run traced")!;
    expect(run).toMatchObject({ ended: true, attributes: { "cairn.run_id": "t1", "cairn.execution_end": "completed" } });
    expect(
      spans.filter((s) => s.name.startsWith("cairn.step")).map((s) => [s.name, s.attributes["cairn.step_outcome"], s.status?.code, s.parent === run]),
    ).toEqual([
      ["cairn.step a#0", "completed", undefined, true],
      ["cairn.step b#0", "retry", 2, true],
      ["cairn.step b#0", "completed", undefined, true],
    ]);
  });

  it("loads @opentelemetry/api when installed (here a dev dependency of the AI SDK); with no SDK registered its spans are no-ops", async () => {
    const observer = await openTelemetryObserver();
    expect(() => {
      observer({ type: "execution-started", runId: "r", workflow: "w", workerId: "x" });
      observer({ type: "step", runId: "r", workflow: "w", opKey: "a#0", outcome: "failed", attempt: 1, durationMs: 5 });
      observer({ type: "execution-ended", runId: "r", workflow: "w", workerId: "x", end: "failed", durationMs: 9 });
    }).not.toThrow();
  });
});
