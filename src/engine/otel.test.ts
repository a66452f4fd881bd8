import { AsyncLocalStorage } from "node:async_hooks";
import type { Context as OtelContext, Tracer } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { onCleanup, testEngine } from "../../test/support/engines.js";
import { waitFor } from "../testing/wait-for.js";
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

describe("openTelemetryObserver with @opentelemetry/api and a registered SDK", () => {
  it("starts a step's span before its function runs and makes it active, so spans started inside nest under it", async () => {
    const api = await import("@opentelemetry/api");
    const store = new AsyncLocalStorage<OtelContext>();
    // A context manager like @opentelemetry/context-async-hooks', and a tracer provider that keeps spans in memory.
    api.context.setGlobalContextManager({
      active: () => store.getStore() ?? api.ROOT_CONTEXT,
      with: (ctx, fn, thisArg, ...args) => store.run(ctx, () => fn.call(thisArg, ...args)),
      bind: (_ctx, target) => target,
      enable() {
        return this;
      },
      disable() {
        store.disable();
        return this;
      },
    });
    type Recorded = { name: string; parent: Recorded | undefined; ended: boolean; attributes: Record<string, unknown> };
    const recorded: Recorded[] = [];
    const spanOf = new WeakMap<object, Recorded>();
    let ids = 0;
    const tracer = {
      startSpan(name: string, options?: { attributes?: Record<string, unknown> }, ctx?: OtelContext) {
        const parentSpan = api.trace.getSpan(ctx ?? api.context.active());
        const record: Recorded = { name, parent: parentSpan && spanOf.get(parentSpan), ended: false, attributes: { ...options?.attributes } };
        recorded.push(record);
        const id = (++ids).toString(16).padStart(16, "0");
        const span = {
          spanContext: () => ({ traceId: "1".repeat(32), spanId: id, traceFlags: 1 }),
          setAttribute: (key: string, value: unknown) => ((record.attributes[key] = value), span),
          setAttributes: () => span,
          addEvent: () => span,
          addLink: () => span,
          addLinks: () => span,
          setStatus: () => span,
          updateName: () => span,
          end: () => void (record.ended = true),
          isRecording: () => true,
          recordException: () => undefined,
        };
        spanOf.set(span, record);
        return span;
      },
      startActiveSpan: () => {
        throw new Error("not used");
      },
    };
    api.trace.setGlobalTracerProvider({ getTracer: () => tracer as unknown as Tracer });
    onCleanup(() => {
      api.trace.disable();
      api.context.disable();
    });

    const seenInside: { active: Recorded | undefined; ended: boolean | undefined }[] = [];
    const wf = defineWorkflow({
      name: "nested",
      async run(ctx) {
        return ctx.step("call", async () => {
          const active = api.trace.getActiveSpan();
          seenInside.push({ active: active && spanOf.get(active), ended: active && spanOf.get(active)?.ended });
          await new Promise((resolve) => setTimeout(resolve, 5)); // the context survives an await
          api.trace.getTracer("app").startSpan("app.request").end();
          return 1;
        });
      },
    });
    const engine = await testEngine("sqlite", { workflows: [wf], observer: await openTelemetryObserver() });
    const worker = engine.startWorker({ pollInterval: 10 });
    onCleanup(() => worker.stop());
    await (await engine.start(wf, undefined, { runId: "n1" })).result({ timeoutMs: 5000 });
    await waitFor(() => recorded.find((s) => s.name === "cairn.run nested")?.ended);

    const run = recorded.find((s) => s.name === "cairn.run nested")!;
    const step = recorded.find((s) => s.name === "cairn.step call#0")!;
    const inner = recorded.find((s) => s.name === "app.request")!;
    // While the step ran, its span was the active one and not yet ended.
    expect(seenInside).toEqual([{ active: step, ended: false }]);
    expect(inner.parent).toBe(step);
    expect(step.parent).toBe(run);
    expect(step).toMatchObject({ ended: true, attributes: { "cairn.op_key": "call#0", "cairn.attempt": 1, "cairn.step_outcome": "completed" } });
    // One attempt, one step span: none made again after the fact.
    expect(recorded.filter((s) => s.name.startsWith("cairn.step"))).toHaveLength(1);
  });
});
