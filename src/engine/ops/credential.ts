import { ValidationError } from "../../core/errors.js";
import { CredentialUnavailableError } from "../credentials.js";
import { nextOpKey, type Scope } from "../replay/op-keys.js";
import type { OpScheduler } from "./op-scheduler.js";

/**
 * `ctx.credential`: the credential's current value from its provider (engine/credentials.ts). Not a
 * journaled op: its value never reaches the journal, and each call (live or on replay) is a use,
 * audited under the key `credential:<name>#k` of the scope it is called in.
 */
export function credential(exec: OpScheduler, scope: Scope, name: string, options: { scope?: string } = {}): Promise<string> {
  if (typeof name !== "string" || name === "") throw new ValidationError(`ctx.credential needs a credential name (got ${JSON.stringify(name)}).`);
  if (options.scope !== undefined && typeof options.scope !== "string") throw new ValidationError(`ctx.credential("${name}"): scope must be a string.`);
  const key = nextOpKey(scope, `credential:${name}`, "step");
  const broker = exec.hostRef.credentials;
  if (!broker) return Promise.reject(new CredentialUnavailableError(name, "the engine has no credentials (createEngine({ credentials }))"));
  return broker.use({ name, runId: exec.runId, opKey: key, scope: options.scope ?? null });
}
