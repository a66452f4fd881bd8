/**
 * `cairn/server`: the HTTP API (Hono) with durable Server-Sent Event streams.
 * @packageDocumentation
 */
export { createServer, type CairnApp } from "./create-server.js";
export { serve, type ServeOptions, type RunningServer } from "./serve.js";
export type { ServerOptions, WebhookOptions } from "./options.js";
export { issueToken, verifyToken, hashSecret, type NewToken } from "./auth/tokens.js";
export { verifyWebhookSignature, webhookSignature } from "../engine/webhook-signature.js";
export { openApiDocument } from "./openapi.js";
export { isLoopbackHost } from "./loopback.js";
export { builtDashboardDir, DASHBOARD_PATH } from "./dashboard.js";
export { serveMetrics, type MetricsServerOptions } from "./metrics/serve-metrics.js";
export type { MetricsTagLabels } from "./metrics/engine-metrics.js";
export {
  startAlertEvaluator,
  evaluateAlerts,
  type AlertEvaluator,
  type AlertEvaluatorOptions,
  type AlertEvaluation,
  type AlertStore,
} from "./alerts/evaluator.js";
export { readAlertRules, writeAlertRules, type StoredAlertRules } from "./alerts/alert-rules.js";
export type { AlertCheckStore } from "./alerts/alert-checks.js";
export type { AlertFireStore } from "./alerts/alert-fire.js";
export {
  parseAlertRules,
  alertRuleSchema,
  alertRuleSetSchema,
  ALERT_KINDS,
  ALERT_TOPIC,
  MAX_ALERT_RULES,
  alertPayloadSchema,
  apiAlertSchema,
  alertRulesResponse,
  type AlertRule,
  type AlertRuleInput,
  type AlertKind,
  type AlertPayload,
  type ApiAlert,
} from "../core/alert-schemas.js";
