/**
 * Cairn: durable execution for long-running AI agents.
 * @packageDocumentation
 */
export { defineWorkflow, isWorkflow } from "./engine/define-workflow.js";
export { createEngine } from "./engine/create-engine.js";
export { consoleLogger, silentLogger } from "./engine/logger.js";
export { CRASH_POINTS, type CrashPoint } from "./engine/crash-points.js";
export type * from "./engine/workflow.js";
export type * from "./engine/engine.js";
export type { EngineEvent, EngineObserver } from "./engine/observer.js";
export { openTelemetryObserver, type OpenTelemetryOptions, type OtelApiLike, type OtelSpanLike } from "./engine/otel.js";
export type { ForkOptions, ForkPatch } from "./engine/fork.js";
export * from "./core/errors.js";
export { toMs, formatMs, type Duration, type DurationUnit } from "./core/duration.js";
export { encode, decode, serializeError, type SerializedError } from "./core/serialize.js";
export { secret, isSecret, Secret, MIN_SECRET_LENGTH } from "./core/secret.js";
export { REDACTED } from "./core/redact.js";
export type { EntryKind, EntryData, JournalEntry, WaitDescriptor, HumanAnswer, OpKind } from "./core/journal.js";
export { RUN_STATUSES, isTerminal, type RunStatus, type RunRecord } from "./core/run.js";
export type * from "./core/store.js";
export { openStore, defaultStoreUrl } from "./store/open-store.js";
