import type { EngineEvent, EngineObserver } from "./observer.js";

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
  context: { active(): unknown };
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
 * step attempt (`cairn.step <opKey>`). Spans go wherever the application's OpenTelemetry SDK exports
 * them; with no SDK registered the API's tracer is a no-op, and when `@opentelemetry/api` (an
 * optional peer dependency) is not installed this observer does nothing at all.
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
  return (event: EngineEvent) => {
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
        const span = executions.get(event.runId);
        if (!span) return;
        executions.delete(event.runId);
        span.setAttribute("cairn.execution_end", event.end);
        if (event.end === "failed" || event.end === "abandoned") span.setStatus({ code: otel.SpanStatusCode.ERROR, message: event.end });
        span.end();
        return;
      }
      case "step": {
        const parent = executions.get(event.runId);
        const end = Date.now();
        const span = tracer.startSpan(
          `cairn.step ${event.opKey}`,
          {
            startTime: end - (event.durationMs ?? 0),
            attributes: {
              "cairn.run_id": event.runId,
              "cairn.workflow": event.workflow,
              "cairn.op_key": event.opKey,
              "cairn.attempt": event.attempt,
              "cairn.step_outcome": event.outcome,
            },
          },
          parent ? otel.trace.setSpan(otel.context.active(), parent) : undefined,
        );
        if (event.outcome !== "completed") span.setStatus({ code: otel.SpanStatusCode.ERROR, message: event.outcome });
        span.end(end);
        return;
      }
      default:
        return;
    }
  };
}
