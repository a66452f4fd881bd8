import type { Hono } from "hono";
import { z } from "zod";
import { UnauthorizedError } from "../../core/errors.js";
import { eventIdSchema, eventTypeSchema, runIdSchema } from "../../core/schemas.js";
import type { Engine } from "../../engine/engine.js";
import type { AuditStore } from "../../core/store.js";
import { RequestError } from "../errors.js";
import {
  DEFAULT_TOLERANCE_SECONDS,
  DEPRECATED_SIGNATURE_HEADER,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
  type SignatureProblem,
} from "../../engine/webhook-signature.js";
import { json, parse, parseJsonText, readBytes } from "../http.js";
import type { ResolvedServerOptions, WebhookOptions } from "../options.js";

const nameParam = z.object({ name: z.string().min(1).max(128) });

const PROBLEMS: Record<SignatureProblem, string> = {
  missing: "has no Cairn-Signature header",
  malformed: "has a Cairn-Signature that is not `t=<unix seconds>,sha256=<hex HMAC>`",
  mismatch: "has a Cairn-Signature that does not match the body",
  expired: "has a Cairn-Signature whose timestamp is outside the tolerance window (a replay, or a clock off by minutes)",
};

/**
 * `POST /webhooks/:name`: an external system delivers an event. The raw body bytes must be signed
 * with the webhook's secret: `Cairn-Signature: t=<unix seconds>,sha256=<hex HMAC-SHA256 of "<t>."
 * and the body>`, checked in constant time, with `t` within the webhook's tolerance of the server's
 * clock (401 otherwise). `X-Cairn-Signature` is still read when `Cairn-Signature` is absent
 * (deprecated). The webhook's functions map the JSON body to a run, an event type and an event id;
 * a repeated event id is delivered once (200 `duplicate: true`).
 * A webhook without `runId` publishes the event (`engine.publishEvent`): it starts the subscribed
 * workflows, once per event id.
 */
/** `store`: the audit log, where each delivery is recorded as the webhook. */
export function registerWebhookRoute(app: Hono, engine: Engine, options: ResolvedServerOptions, store: Pick<AuditStore, "appendAudit">): void {
  app.post("/webhooks/:name", async (c) => {
    const { name } = parse(nameParam, c.req.param(), "path");
    const hook = Object.hasOwn(options.webhooks, name) ? options.webhooks[name] : undefined;
    if (!hook) throw new RequestError("ROUTE_NOT_FOUND", `No webhook "${name}" is configured on this server.`, 404);
    const raw = await readBytes(c, options.bodyLimitBytes);
    const header = c.req.header(SIGNATURE_HEADER) ?? c.req.header(DEPRECATED_SIGNATURE_HEADER);
    const problem = verifyWebhookSignature(hook.secret, raw, header, { toleranceSeconds: hook.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS });
    if (problem)
      throw new UnauthorizedError(
        `This delivery to webhook "${name}" ${PROBLEMS[problem]}: send Cairn-Signature: t=<unix seconds>,sha256=<hex HMAC-SHA256 of "<t>." followed by the raw body, with the webhook's secret>.`,
      );
    const body = parseJsonText(decodeUtf8(raw));
    const { runId, type, eventId, payload } = mapDelivery(hook, body, name);
    if (runId === undefined) {
      const published = await engine.publishEvent(type, payload, { eventId });
      const started = published.runs.filter((r) => r.created).map((r) => r.runId);
      if (started.length > 0 || published.cancelled.length > 0)
        await store.appendAudit({ at: Date.now(), actor: `webhook:${name}`, action: "event.publish", target: null, detail: { type, eventId, started } });
      return json(c, published, started.length > 0 ? 202 : 200);
    }
    const result = await engine.sendEvent(runId, type, payload, { eventId });
    if (!result.duplicate) await store.appendAudit({ at: Date.now(), actor: `webhook:${name}`, action: "run.event", target: runId, detail: { type, eventId } });
    return json(c, { runId, ...result }, result.duplicate ? 200 : 202);
  });
}

/** UTF-8 text of a signed body (a leading BOM dropped); invalid UTF-8 is a 400, never replaced silently. */
function decodeUtf8(raw: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(raw);
  } catch {
    throw new RequestError("INVALID_INPUT", "The webhook body is not valid UTF-8 JSON. Send the JSON encoded as UTF-8.", 400);
  }
}

function mapDelivery(hook: WebhookOptions, body: unknown, name: string) {
  try {
    const runId = hook.runId === undefined ? undefined : runIdSchema.parse(hook.runId(body));
    const type = eventTypeSchema.parse(typeof hook.type === "function" ? hook.type(body) : hook.type);
    const eventId = eventIdSchema.parse(hook.eventId(body));
    const payload = hook.payload ? hook.payload(body) : body;
    return { runId, type, eventId, payload };
  } catch (error) {
    throw new RequestError(
      "INVALID_INPUT",
      `Webhook "${name}" could not map this body to a run, type and event id (${(error as Error).message.split("\n")[0]}).`,
      400,
    );
  }
}
