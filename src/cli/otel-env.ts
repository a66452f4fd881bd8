import type { EngineObserver } from "../engine/observer.js";
import { openTelemetryObserver, type OtelApiLike } from "../engine/otel.js";
import { note } from "./context.js";
import { UsageError } from "./errors.js";

// A variable, so TypeScript does not need the optional peer dependency to compile.
const OTEL_API: string = "@opentelemetry/api";

/**
 * `CAIRN_OTEL=1`: the engine options that record OpenTelemetry spans (runs, steps) through the
 * globally registered tracer provider. Registering the SDK is the user's: in a workflow module, or
 * with `NODE_OPTIONS="--import ./otel.mjs"`. Unset (or 0): nothing, and no cost.
 */
export async function otelFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<{ observer?: EngineObserver }> {
  const value = env.CAIRN_OTEL?.trim();
  if (value === undefined || value === "" || value === "0") return {};
  if (value !== "1") throw new UsageError(`CAIRN_OTEL must be 1 (record spans) or 0, got "${value}".`);
  let api: OtelApiLike;
  try {
    api = (await import(OTEL_API)) as OtelApiLike;
  } catch {
    note("CAIRN_OTEL=1, but @opentelemetry/api is not installed: no spans are recorded. Install it beside the SDK you register.");
    return {};
  }
  return { observer: await openTelemetryObserver({ api }) };
}
