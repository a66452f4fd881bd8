import { userInfo } from "node:os";
import type { SecurityStore } from "../core/store.js";

/** The audit log's actor for this CLI process: `cli:<OS user>`. */
export function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return "cli:unknown";
  }
}

/** Records a privileged action taken through the CLI. */
export async function recordAudit(
  store: Pick<SecurityStore, "appendAudit">,
  action: string,
  target: string | null,
  detail: Record<string, unknown> | null = null,
): Promise<void> {
  await store.appendAudit({ at: Date.now(), actor: cliActor(), action, target, detail });
}
