import type { Context } from "hono";
import type { SecurityStore } from "../../core/store.js";
import { principalOf } from "./principal.js";

/** Records a privileged action of this request's caller in the audit log (after it succeeded). */
export async function audit(
  c: Context,
  store: Pick<SecurityStore, "appendAudit">,
  action: string,
  target: string | null,
  detail: Record<string, unknown> | null = null,
): Promise<void> {
  await store.appendAudit({ at: Date.now(), actor: principalOf(c).actor, action, target, detail });
}
