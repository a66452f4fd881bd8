/**
 * Cairn: durable execution for long-running AI agents.
 * @packageDocumentation
 */
export { defineWorkflow, isWorkflow } from "./engine/define-workflow.js";
export { createEngine } from "./engine/create-engine.js";
export { defineEvent, isEventDefinition, type EventDefinition, type EventPayload } from "./engine/define-event.js";
export { triggeredRunId, type PublishResult } from "./engine/event-triggers.js";
export {
  defineSchedule,
  isSchedule,
  parseScheduleRunId,
  scheduleRunId,
  scheduleSchema,
  type Schedule,
  type ScheduleInfo,
  type ScheduleOptions,
  type OverlapPolicy,
  type CatchUpPolicy,
} from "./engine/schedule.js";
export type { ScheduleRecord, ScheduleState, ScheduleDefinitionRecord } from "./core/schedule.js";
export { consoleLogger, silentLogger } from "./engine/logger.js";
export { CRASH_POINTS, OUTBOX_CRASH_POINTS, SAGA_CRASH_POINTS, type CrashPoint, type SagaCrashPoint } from "./engine/crash-points.js";
export type * from "./engine/outbox.js";
export type { EmitOptions, EmittedMessage } from "./engine/emit.js";
export { verifyWebhookSignature, webhookSignature, type SignatureProblem } from "./engine/webhook-signature.js";
export {
  OUTBOX_STATUSES,
  outboxMessageId,
  type OutboxStatus,
  type OutboxMessage,
  type ListOutboxQuery,
  type OutboxClaimRequest,
  type OutboxSettlement,
} from "./core/outbox.js";
export type * from "./engine/workflow.js";
export type * from "./engine/engine.js";
export { DEFAULT_MAX_RECOVERY_ATTEMPTS } from "./engine/engine.js";
export type { EngineEvent, EngineObserver, StepAttempt } from "./engine/observer.js";
export { openTelemetryObserver, type OpenTelemetryOptions, type OtelApiLike, type OtelSpanLike } from "./engine/otel.js";
export type { ForkOptions, ForkPatch } from "./engine/fork.js";
export * from "./core/errors.js";
export { toMs, formatMs, type Duration, type DurationUnit } from "./core/duration.js";
export {
  debounceSchema,
  flowOptionsSchema,
  queueNameSchema,
  queueOptionsSchema,
  queuesSchema,
  type DebounceOptions,
  type FlowOptions,
  type QueueLimits,
  type QueueOptions,
  type RunFlow,
  type QueueStat,
} from "./core/flow-control.js";
export type { QueueState } from "./engine/queue-state.js";
export { encode, decode, serializeError, type SerializedError } from "./core/serialize.js";
export { secret, isSecret, Secret, MIN_SECRET_LENGTH } from "./core/secret.js";
export { REDACTED } from "./core/redact.js";
export type {
  EntryKind,
  EntryData,
  JournalEntry,
  NewEntry,
  WaitDescriptor,
  HumanAnswer,
  HumanNotice,
  OpKind,
  AgentMessageRecord,
  ToolCallRecord,
} from "./core/journal.js";
export {
  RUN_STATUSES,
  LIVE_STATUSES,
  TERMINAL_STATUSES,
  FAILED_STATUSES,
  TERMINAL_ENTRY_KINDS,
  isTerminal,
  isFailed,
  isTerminalEntry,
  projectEntry,
  type RunStatus,
  type TerminalStatus,
  type RunRecord,
  type RunPatch,
} from "./core/run.js";
export type * from "./core/store.js";
export type * from "./core/live-delta-store.js";
export { openStore, defaultStoreUrl, type OpenStoreOptions } from "./store/open-store.js";
export type { PostgresStoreOptions } from "./store/postgres/postgres-config.js";
export { RUN_EXPORT_FORMAT, RUN_EXPORT_VERSION, runExportSchema, parseRunExport, type RunExport } from "./core/run-export.js";
export type { PruneOptions, PruneResult, RetentionPolicy, ExportOptions, ImportOptions, CompactOptions, CompactResult } from "./core/retention-schemas.js";
export type { CompactionOutcome, CompactionPlan, JournalCompaction } from "./core/compaction.js";
export { withPayloads, type PayloadOptions } from "./store/payloads/payload-store.js";
export { aesGcmCodec, aesGcmCodecFromEnv, type AesGcmCodecOptions } from "./store/payloads/aes-gcm-codec.js";
export { PayloadCorruptError, PayloadKeyMissingError } from "./core/payload-errors.js";
export { DEFAULT_INLINE_LIMIT, type PayloadCodec } from "./core/payloads.js";
export { dryReplay, type DryReplayRun } from "./engine/dry-replay.js";
export {
  JOURNAL_FILE_FORMAT,
  parseJournalFile,
  parseVersionRef,
  journalFileSchema,
  type DrainedVersion,
  type ReplayDivergence,
  type ReplayReport,
  type JournalFile,
  type VersionCount,
  type VersionSummary,
} from "./core/deploys.js";
export type { StepFlowOptions, StepFlowLimit, StepConcurrency, StepRateLimit, StepSlotGrant, StepSlotRequest } from "./core/step-flow.js";
export type { PublishedValue, RequestOptions } from "./engine/live-runs.js";
export { ApprovalRefusedError } from "./engine/ops/resume-approval.js";
export {
  commandCredential,
  CredentialRevokedError,
  CredentialUnavailableError,
  envCredential,
  fileCredential,
  type CredentialProvider,
  type CredentialRequest,
} from "./engine/credentials.js";
