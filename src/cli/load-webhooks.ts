import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { WebhookOptions } from "../server/options.js";
import { UsageError } from "./errors.js";

/**
 * Loads the webhooks of `cairn serve --webhooks <module>`: an ES module exporting `webhooks` (or a
 * default export), an object of webhook name → {@link WebhookOptions}, each served at
 * `POST /webhooks/<name>`. The module reads its secrets from the environment.
 * @example
 * // hooks.mjs
 * export const webhooks = {
 *   ci: { secret: process.env.CI_SECRET, runId: (b) => b.run, type: "build", eventId: (b) => b.delivery },
 * };
 */
export async function loadWebhooks(spec: string): Promise<Record<string, WebhookOptions>> {
  const path = resolve(spec);
  if (!existsSync(path))
    throw new UsageError(`Webhook module "${spec}" not found (looked at ${path}). Pass the path of an ES module that exports \`webhooks\`.`);
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`Could not load webhook module ${spec}: ${(error as Error).message}`);
  }
  const hooks = module.webhooks ?? module.default;
  if (typeof hooks !== "object" || hooks === null || Array.isArray(hooks))
    throw new UsageError(`Module "${spec}" exports no webhooks: export \`webhooks\`, an object of name → { secret, runId, type, eventId }.`);
  const out: Record<string, WebhookOptions> = {};
  for (const [name, hook] of Object.entries(hooks as Record<string, Partial<WebhookOptions>>)) {
    const problem = webhookProblem(hook);
    if (problem) throw new UsageError(`Webhook "${name}" in ${spec} ${problem}.`);
    out[name] = hook as WebhookOptions;
  }
  return out;
}

function webhookProblem(hook: Partial<WebhookOptions>): string | undefined {
  if (typeof hook !== "object" || hook === null) return "is not an object";
  if (typeof hook.secret !== "string" || hook.secret.length < 16)
    return "needs a `secret` of at least 16 characters (read it from the environment, e.g. process.env.CI_WEBHOOK_SECRET)";
  if (typeof hook.runId !== "function") return "needs `runId`, a function of the parsed body";
  if (typeof hook.eventId !== "function") return "needs `eventId`, a function of the parsed body (the sender's delivery id)";
  if (typeof hook.type !== "string" && typeof hook.type !== "function") return "needs `type`, a string or a function of the parsed body";
  return undefined;
}
