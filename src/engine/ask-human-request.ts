import type { z } from "zod";
import type { Duration } from "../core/duration.js";

// The contract of `ctx.askHuman` (see workflow.ts): what a workflow asks a person, the reply it gets,
// and the notice sent when nobody answers in time. Re-exported by workflow.ts.

/** What happens when a question for a person times out. */
export type HumanEscalation = "fail" | "cancel" | { option: string; value?: unknown };

/** What `ctx.askHuman` asks. */
export interface AskHumanRequest {
  /** What the person is asked, shown in `cairn human-requests` and the API. */
  question: string;
  /** When given, an answer must choose one of them. */
  options?: string[];
  /** Anything that helps the person decide (journaled with the request). */
  context?: unknown;
  /** How long to wait; then `onTimeout` applies. */
  timeout?: Duration;
  /**
   * On timeout: throw TimeoutError ("fail", the default), cancel the run ("cancel"), choose an option
   * (with an optional value), or give it more time — `{ extend: "24h", times: 2, then: "fail" }` — which
   * moves the request's deadline (shown by the API and `cairn human-requests`) before the final escalation.
   */
  onTimeout?: HumanEscalation | { extend: Duration; times?: number; then?: HumanEscalation };
  /**
   * A zod schema the answer's `value` must match (for free-form input, or the value that goes with an
   * option); it is journaled as JSON Schema with the request, and answers that do not match are refused.
   */
  input?: z.ZodType<unknown>;
  /** Op name; default "ask". The request id is `<runId>:<op key>`. */
  name?: string;
  /**
   * Answers that must come with a note (`message`): `true` for every answer, or the options that need
   * one (e.g. `["reject"]`: say why). An answer without it is refused (the API answers 422), and the
   * dashboard marks the note field required for those options.
   */
  requireNote?: boolean | string[];
  /**
   * The answer is a secret (a one-time code, a password): the run gets it, but views of the run (the
   * API, the stream, `cairn human-requests`, the dashboard) show its `value` and `message` as `"[redacted]"`,
   * and redact their text wherever it shows up later. For secrets in the `context`, wrap them in `secret()`.
   */
  secret?: boolean;
  /**
   * Tell someone when nobody answers in time (needs `timeout`). Each extension (`onTimeout.extend`)
   * writes an outbox message on topic `human.escalated`, and the final escalation one on
   * `human.timedout`, in the same commit as its journal entry, so it is sent exactly when the deadline
   * moved (at least once, by `outbox.handlers` or `outbox.webhooks`; deduplicate by `messageId`).
   * `true` uses those topics; `{ topic }` sends both to one topic; `data` (plain JSON) rides along.
   * The payload is {@link HumanNoticePayload}.
   * @example
   * await ctx.askHuman({ question: "Approve the refund?", timeout: "4h",
   *   onTimeout: { extend: "4h", times: 2, then: "cancel" }, notify: { data: { team: "support" } } });
   */
  notify?: boolean | { topic?: string; data?: unknown };
}

/** The payload of the outbox message an askHuman with `notify` writes when its deadline passes. */
export interface HumanNoticePayload {
  /** `extended`: the deadline moved to `timeoutAt`; `timedout`: the final escalation happened. */
  event: "extended" | "timedout";
  requestId: string;
  runId: string;
  question: string;
  options: string[];
  /** With `extended`: which extension (1, 2, …) and the new deadline (epoch ms). */
  extension?: number;
  timeoutAt?: number;
  /** With `timedout`: what happened (`fail`, `cancel`, or `choose` with `option`). */
  escalation?: "fail" | "cancel" | "choose";
  option?: string;
  /** `notify.data`, when given. */
  data?: unknown;
}

/** A person's answer to `ctx.askHuman` (or the escalation chosen when it timed out). */
export interface HumanReply<T = unknown> {
  requestId: string;
  /** The option chosen, or null for a free-form answer. */
  option: string | null;
  /** What the person supplied with the answer (e.g. edited arguments). */
  value: T | undefined;
  /** Who answered; "timeout" when the escalation chose. */
  by: string | null;
  message: string | null;
  timedOut: boolean;
}
