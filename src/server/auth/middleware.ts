import type { Context, Hono } from "hono";
import { UnauthorizedError } from "../../core/errors.js";
import type { SecurityStore, TokenScope } from "../../core/store.js";
import { requireScope, setPrincipal } from "./principal.js";
import { verifyToken } from "./tokens.js";

/**
 * Routes anyone may call, even with token auth: liveness, the API description and the dashboard's
 * static files (they hold no data; the dashboard calls the API with a token). Webhooks check their
 * own signature.
 */
function isPublic(path: string): boolean {
  return path === "/health" || path === "/openapi.json" || path.startsWith("/webhooks/") || path === "/" || path === "/ui" || path.startsWith("/ui/");
}

/**
 * The scope a request needs: admin for tokens, the audit log, the outbox (it spans namespaces) and
 * run export/import (an export holds every journaled value, secret step results included), read
 * for other GETs, write for the rest.
 */
export function scopeFor(method: string, path: string): TokenScope {
  if (path === "/tokens" || path.startsWith("/tokens/") || path === "/audit" || path === "/outbox" || path.startsWith("/outbox/")) return "admin";
  if (path === "/runs/import" || /^\/runs\/[^/]+\/export$/.test(path)) return "admin";
  return method === "GET" || method === "HEAD" ? "read" : "write";
}

/**
 * Token authentication: every request but the public ones needs `Authorization: Bearer <token>`
 * with a live token (401 otherwise) that has the route's scope (403 otherwise). The token text is
 * never logged or echoed: errors name neither it nor its id.
 */
export function registerTokenAuth(app: Hono, store: SecurityStore): void {
  app.use("*", async (c: Context, next) => {
    if (isPublic(c.req.path)) return next();
    const header = c.req.header("authorization");
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new UnauthorizedError();
    const record = await verifyToken(store, match[1]!);
    if (!record) throw new UnauthorizedError("The API token is malformed, unknown or revoked. Create a new one with `cairn token create`.");
    // A namespaced token is never admin (issueToken refuses it); a record that says so anyway gets no admin power.
    const scopes = record.namespace === null ? record.scopes : record.scopes.filter((scope) => scope !== "admin");
    const principal = { actor: `token:${record.name}`, scopes: new Set(scopes), namespace: record.namespace };
    requireScope(principal, scopeFor(c.req.method, c.req.path));
    setPrincipal(c, principal);
    return next();
  });
}
