import { z } from "zod";
import { RUN_STATUSES, type RunStatus } from "./run.js";

/**
 * Validators shared by every front door: the engine's public methods, the HTTP API
 * (`cairn/server`, which also publishes them in its OpenAPI description) and the CLI.
 * One definition, so a value the library accepts is a value the API accepts.
 */

/** A run id: 1–256 characters, no whitespace. */
export const runIdSchema = z
  .string()
  .min(1, "must not be empty")
  .max(256, "must be at most 256 characters")
  .regex(/^[^\s]+$/, "must not contain whitespace");

/** An event type, e.g. `"review"`. */
export const eventTypeSchema = z.string().min(1, "must not be empty").max(256, "must be at most 256 characters");

/** An event id: the idempotency key of `sendEvent`. */
export const eventIdSchema = z.string().min(1, "must not be empty").max(256, "must be at most 256 characters");

/** A human request id (`<runId>:<op key>`). */
export const requestIdSchema = z.string().min(1, "must not be empty").max(1024, "must be at most 1024 characters");

/** A run status. */
export const runStatusSchema = z.enum(RUN_STATUSES as [RunStatus, ...RunStatus[]]);

/** A reason given when cancelling. */
export const cancelReasonSchema = z.string().max(10_000, "must be at most 10000 characters");

/** An answer to a human request (`engine.respondToHuman`, `POST /human-requests/:id/answer`). */
export const humanAnswerSchema = z
  .object({
    action: z.enum(["retry", "skip", "fail", "answer"]),
    option: z.string().min(1).max(256).optional(),
    value: z.unknown().optional(),
    message: z.string().max(10_000).optional(),
    by: z
      .string()
      .max(256)
      .optional()
      .describe("Who answered. Over HTTP with token auth this is replaced by the token (`token:<name>`); the given name goes to the audit log as claimedBy."),
  })
  .strict();

/** Formats zod issues as `path: message; …`, the way every Cairn validation message reads. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message)).join("; ");
}
