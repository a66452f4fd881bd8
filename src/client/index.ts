/**
 * `cairn/client`: a typed client of the Cairn HTTP API, with resumable run streams.
 * Runs anywhere fetch does; it imports no server code.
 * @packageDocumentation
 */
export {
  CairnClient,
  CairnApiError,
  type ClientOptions,
  type HumanRequestsQuery,
  type StreamOptions,
  type StreamEnd,
  type StreamDelta,
  type BulkTarget,
  type BulkResult,
  type RunFilterQuery,
} from "./client.js";
export { isCairnError } from "../core/errors.js";
export { RUN_STATUSES, LIVE_STATUSES, TERMINAL_STATUSES, FAILED_STATUSES, isTerminal, isFailed, type RunStatus } from "../core/run-status.js";
export type {
  AnswerBody,
  ApiErrorBody,
  ApiHumanRequest,
  ApiJournalEntry,
  ApiRunCosts,
  ApiJournalPage,
  ApiRun,
  ApiRunPage,
  ApiVersion,
  ApiWorker,
  ApiSchedule,
  ApiQueue,
  ApiToken,
  ApiAuditEntry,
  CreateTokenBody,
  SendEventBody,
  StartRunBody,
} from "../core/api-schemas.js";
export type { ApiOutboxMessage } from "../core/outbox.js";
export type { ApiCostTotals } from "../core/cost-schemas.js";
export type { ScheduleActionResult, VersionActionBody, VersionActionResult } from "../core/console-schemas.js";
export type { ApiAlert, ApiAlertRules, AlertRuleInput, AlertPayload, AlertKind } from "../core/alert-schemas.js";
