import { z } from "zod";
import { RUN_STATUSES, type RunStatus } from "./run.js";

/**
 * Validators shared by every front door: the engine's public methods, the HTTP API
 * (`cairn/server`, which also publishes them in its OpenAPI description) and the CLI.
 * One definition, so a value the library accepts is a value the API accepts.
 */

/**
 * No control characters: C0 (ESC, BEL, CR…), DEL and C1. Names and ids are printed on terminals
 * (`cairn runs`, `show`, `audit`), where an ESC sequence could clear the screen or retitle the window.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
export const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f-\u009f]*$/;

const NO_CONTROL_MESSAGE = "must not contain control characters (C0 such as ESC or BEL, DEL, or C1)";

/** A name or id as text a terminal shows as it is: no control characters. */
export function printable(schema: z.ZodString): z.ZodString {
  return schema.regex(NO_CONTROL_CHARACTERS, NO_CONTROL_MESSAGE);
}

/**
 * A run id that names a run to create or to reach: 1–256 characters, no whitespace, no control
 * characters. To look up a run stored before ids were checked this strictly, see {@link runIdRefSchema}.
 */
export const runIdSchema = printable(
  z
    .string()
    .min(1, "must not be empty")
    .max(256, "must be at most 256 characters")
    .regex(/^[^\s]+$/, "must not contain whitespace"),
);

/**
 * A run id that refers to an existing run: as {@link runIdSchema} but control characters are
 * allowed, so runs stored by older versions can still be read, cancelled and retried.
 */
export const runIdRefSchema = z
  .string()
  .min(1, "must not be empty")
  .max(256, "must be at most 256 characters")
  .regex(/^[^\s]+$/, "must not contain whitespace");

/** An event type, e.g. `"review"`: no control characters. */
export const eventTypeSchema = printable(z.string().min(1, "must not be empty").max(256, "must be at most 256 characters"));

/** An event id: the idempotency key of `sendEvent`; no control characters. */
export const eventIdSchema = printable(z.string().min(1, "must not be empty").max(256, "must be at most 256 characters"));

/** A human request id (`<runId>:<op key>`). */
export const requestIdSchema = z.string().min(1, "must not be empty").max(1024, "must be at most 1024 characters");

/** A run status. */
export const runStatusSchema = z.enum(RUN_STATUSES as [RunStatus, ...RunStatus[]]);

/** A reason given when cancelling. */
export const cancelReasonSchema = z.string().max(10_000, "must be at most 10000 characters");

/** An answer to a human request (`engine.respondToHuman`, `POST /human-requests/:id/answer`). */
export const humanAnswerSchema = z
  .object({
    action: z.enum(["retry", "skip", "fail", "answer"], {
      error: (issue) =>
        issue.input === undefined
          ? 'missing: "answer" (with an option, e.g. {"action":"answer","option":"approve"}), or "retry", "skip" or "fail" for a "did this happen?" request'
          : 'must be "answer", "retry", "skip" or "fail"',
    }),
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
