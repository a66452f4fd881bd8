import type { Context } from "hono";
import { ForbiddenError, RunNotFoundError } from "../../core/errors.js";
import type { TokenScope } from "../../core/store.js";

/** Who is calling: a token (with its scopes and namespace), or anyone when auth is off. */
export interface Principal {
  /** The audit log's actor: `token:<name>`, or `anonymous` when the server has no auth. */
  actor: string;
  scopes: ReadonlySet<TokenScope>;
  /** Runs outside `<namespace>/` are invisible to this caller. */
  namespace: string | null;
  /** The id of the API token behind the request; null when the server has no auth. */
  tokenId: string | null;
}

/** When the server runs without auth: every scope, every run. */
export const ANONYMOUS: Principal = { actor: "anonymous", scopes: new Set(["read", "write", "admin"]), namespace: null, tokenId: null };

const principals = new WeakMap<Request, Principal>();

/** Remembers who made this request (set by the auth middleware). */
export function setPrincipal(c: Context, principal: Principal): void {
  principals.set(c.req.raw, principal);
}

/** Who made this request. Routes registered without the auth middleware act as {@link ANONYMOUS}. */
export function principalOf(c: Context): Principal {
  return principals.get(c.req.raw) ?? ANONYMOUS;
}

/** True when the caller may see this run. */
export function canSee(principal: Principal, runId: string): boolean {
  return principal.namespace === null || runId.startsWith(`${principal.namespace}/`);
}

/**
 * Throws RunNotFoundError (404, not 403) when the run is outside the caller's namespace, so a
 * namespaced token cannot learn that runs elsewhere exist.
 */
export function requireVisible(c: Context, runId: string): void {
  if (!canSee(principalOf(c), runId)) throw new RunNotFoundError(runId);
}

/** Throws ForbiddenError (403) unless the caller has `scope`. */
export function requireScope(principal: Principal, scope: TokenScope): void {
  if (!principal.scopes.has(scope)) throw new ForbiddenError(scope);
}
