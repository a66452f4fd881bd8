import type { EngineEvent, EngineObserver, StepAttempt } from "./observer.js";

/** The part of a span Cairn uses (structurally `Span` of `@opentelemetry/api`). */
export interface OtelSpanLike {
  setAttribute(key: string, value: string | number | boolean): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(endTime?: number): void;
}

/** The part of `@opentelemetry/api` Cairn uses; pass your own import, or let Cairn load it. */
export interface OtelApiLike {
  trace: {
    getTracer(
      name: string,
      version?: string,
    ): { startSpan(name: string, options?: { startTime?: number; attributes?: Record<string, string | number> }, context?: unknown): OtelSpanLike };
    setSpan(context: unknown, span: OtelSpanLike): unknown;
  };
  /** `with` runs a function with a context active (so spans started inside nest); without it, steps' code is not nested. */
  context: { active(): unknown; with?<T>(context: unknown, fn: () => T): T };
  SpanStatusCode: { ERROR: number };
}

/** Options of {@link openTelemetryObserver}. */
export interface OpenTelemetryOptions {
  /** The `@opentelemetry/api` module. Default: imported if installed; without it the observer does nothing. */
  api?: OtelApiLike;
  /** Tracer name. Default "cairn". */
  tracerName?: string;
}

// A variable, so TypeScript does not need the optional peer dependency to compile.
const OTEL_API: string = "@opentelemetry/api";

/**
 * An engine observer that records OpenTelemetry spans: one per execution of a run on a worker
 * (`cairn.run <workflow>`, from claim to completion, suspension or release) and, inside it, one per
 * step attempt (`cairn.step <opKey>`). A step's span starts when its intent is durable, just before
 * its function runs, and is the active span while it runs, so spans your step code starts (an HTTP
 * client's, a model SDK's) nest under it; it ends when the outcome is durable. Spans go wherever the
 * application's OpenTelemetry SDK exports them; with no SDK registered the API's tracer is a no-op,
 * and when `@opentelemetry/api` (an optional peer dependency) is not installed this observer does
 * nothing at all. `cairn worker` and `cairn serve` add it when `CAIRN_OTEL=1` is set.
 * @example
 * const engine = await createEngine({ store, workflows, observer: await openTelemetryObserver() });
 */
export async function openTelemetryObserver(options: OpenTelemetryOptions = {}): Promise<EngineObserver> {
  let api = options.api;
  if (!api) {
    try {
      api = (await import(OTEL_API)) as OtelApiLike;
    } catch {
      return () => {};
    }
  }
  const otel = api;
  const tracer = otel.trace.getTracer(options.tracerName ?? "cairn");
  const executions = new Map<string, OtelSpanLike>();
  /** Step spans started by aroundStep, by run then `opKey#attempt`, until their outcome's event ends them. */
  const steps = new Map<string, Map<string, OtelSpanLike>>();
  const inRun = (runId: string) => (executions.has(runId) ? otel.trace.setSpan(otel.context.active(), executions.get(runId)!) : undefined);
  const stepAttributes = (step: StepAttempt) => ({
    "cairn.run_id": step.runId,
    "cairn.workflow": step.workflow,
    "cairn.op_key": step.opKey,
    "cairn.attempt": step.attempt,
  });

  const observer: EngineObserver = (event: EngineEvent) => {
    switch (event.type) {
      case "execution-started": {
        executions.get(event.runId)?.end();
        const span = tracer.startSpan(`cairn.run ${event.workflow}`, {
          attributes: { "cairn.run_id": event.runId, "cairn.workflow": event.workflow, "cairn.worker_id": event.workerId },
        });
        executions.set(event.runId, span);
        return;
      }
      case "execution-ended": {
        // Attempts whose outcome never became durable here (lease lost, cancelled, stopped).
        for (const span of steps.get(event.runId)?.values() ?? []) {
          span.setStatus({ code: otel.SpanStatusCode.ERROR, message: `no outcome (${event.end})` });
          span.end();
        }
        steps.delete(event.runId);
        const span = executions.get(event.runId);
        if (!span) return;
        executions.delete(event.runId);
        span.setAttribute("cairn.execution_end", event.end);
        if (event.end === "failed" || event.end === "abandoned") span.setStatus({ code: otel.SpanStatusCode.ERROR, message: event.end });
        span.end();
        return;
      }
      case "step": {
        const key = `${event.opKey}#${event.attempt}`;
        let span = steps.get(event.runId)?.get(key);
        if (span) steps.get(event.runId)!.delete(key);
        // An outcome without a function run here (a recovered intent settled by reconcile, say): a span after the fact.
        span ??= tracer.startSpan(
          `cairn.step ${event.opKey}`,
          { startTime: Date.now() - (event.durationMs ?? 0), attributes: stepAttributes(event) },
          inRun(event.runId),
        );
        span.setAttribute("cairn.step_outcome", event.outcome);
        if (event.outcome !== "completed") span.setStatus({ code: otel.SpanStatusCode.ERROR, message: event.outcome });
        span.end();
        return;
      }
      default:
        return;
    }
  };
  observer.aroundStep = <T>(step: StepAttempt, run: () => T): T => {
    const span = tracer.startSpan(`cairn.step ${step.opKey}`, { attributes: stepAttributes(step) }, inRun(step.runId));
    let held = steps.get(step.runId);
    if (!held) steps.set(step.runId, (held = new Map()));
    held.get(`${step.opKey}#${step.attempt}`)?.end();
    held.set(`${step.opKey}#${step.attempt}`, span);
    return otel.context.with ? otel.context.with(otel.trace.setSpan(otel.context.active(), span), run) : run();
  };
  return observer;
}
