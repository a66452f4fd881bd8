import { createHmac, timingSafeEqual } from "node:crypto";
import type { Hono } from "hono";
import { z } from "zod";
import { UnauthorizedError } from "../../core/errors.js";
import { eventIdSchema, eventTypeSchema, runIdSchema } from "../../core/schemas.js";
import type { Engine } from "../../engine/engine.js";
import { RequestError } from "../errors.js";
import { json, parse, parseJsonText, readText } from "../http.js";
import type { ResolvedServerOptions, WebhookOptions } from "../options.js";

const nameParam = z.object({ name: z.string().min(1).max(128) });
const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;

/**
 * `POST /webhooks/:name`: an external system delivers an event. The raw body must be signed with the
 * webhook's secret (`X-Cairn-Signature: sha256=<hex HMAC-SHA256 of the body>`, checked in constant
 * time; 401 otherwise). The webhook's functions map the JSON body to a run, an event type and an
 * event id; a repeated event id is delivered once (200 `duplicate: true`). A webhook without `runId`
 * publishes the event (`engine.publishEvent`): it starts the subscribed workflows, once per event id.
 */
export function registerWebhookRoute(app: Hono, engine: Engine, options: ResolvedServerOptions): void {
  app.post("/webhooks/:name", async (c) => {
    const { name } = parse(nameParam, c.req.param(), "path");
    const hook = Object.hasOwn(options.webhooks, name) ? options.webhooks[name] : undefined;
    if (!hook) throw new RequestError("ROUTE_NOT_FOUND", `No webhook "${name}" is configured on this server.`, 404);
    const raw = await readText(c, options.bodyLimitBytes);
    if (!signatureMatches(hook.secret, raw, c.req.header("x-cairn-signature")))
      throw new UnauthorizedError(
        `The X-Cairn-Signature of this delivery to webhook "${name}" is missing or does not match: sign the raw body with the webhook's secret (sha256=<hex HMAC>).`,
      );
    const body = parseJsonText(raw);
    const { runId, type, eventId, payload } = mapDelivery(hook, body, name);
    if (runId === undefined) {
      const published = await engine.publishEvent(type, payload, { eventId });
      const started = published.runs.filter((r) => r.created).map((r) => r.runId);
      if (started.length > 0 || published.cancelled.length > 0)
        await engine.store.appendAudit({ at: Date.now(), actor: `webhook:${name}`, action: "event.publish", target: null, detail: { type, eventId, started } });
      return json(c, published, started.length > 0 ? 202 : 200);
    }
    const result = await engine.sendEvent(runId, type, payload, { eventId });
    if (!result.duplicate)
      await engine.store.appendAudit({ at: Date.now(), actor: `webhook:${name}`, action: "run.event", target: runId, detail: { type, eventId } });
    return json(c, { runId, ...result }, result.duplicate ? 200 : 202);
  });
}

/** True when `header` is `sha256=<hex>` of the HMAC-SHA256 of `body` under `secret`, compared in constant time. */
export function signatureMatches(secret: string, body: string, header: string | undefined): boolean {
  const match = header === undefined ? null : SIGNATURE.exec(header.trim());
  if (!match) return false;
  const expected = createHmac("sha256", secret).update(body, "utf8").digest();
  const given = Buffer.from(match[1]!, "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
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
