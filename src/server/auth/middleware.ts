import type { Context, Hono } from "hono";
import { TokenExpiredError, UnauthorizedError } from "../../core/errors.js";
import type { TokenRecord, TokenScope, TokenStore } from "../../core/store.js";
import { requireScope, setPrincipal } from "./principal.js";
import { TicketBook } from "./tickets.js";
import { isExpired, verifyToken } from "./tokens.js";

/**
 * Routes anyone may call, even with token auth: liveness, the API description and the dashboard's
 * static files (they hold no data; the dashboard calls the API with a token). Webhooks check their
 * own signature; `POST /auth/session` checks the ticket in its body.
 */
export function isPublicPath(path: string): boolean {
  return (
    path === "/health" ||
    path === "/openapi.json" ||
    path === "/auth/session" ||
    path.startsWith("/webhooks/") ||
    path === "/" ||
    path === "/ui" ||
    path.startsWith("/ui/")
  );
}

/**
 * The scope a request needs: admin for tokens, the audit log, the outbox (it spans namespaces), alert rules,
 * pausing or resuming a schedule and retiring or reinstating a version (they act on every namespace), and
 * run export/import (an export holds every journaled value, secret step results included), read
 * for other GETs and for asking a ticket (a ticket carries no more than its token), write for the rest.
 */
export function scopeFor(method: string, path: string): TokenScope {
  if (path === "/tokens" || path.startsWith("/tokens/") || path === "/audit" || path === "/outbox" || path.startsWith("/outbox/")) return "admin";
  if (method === "POST" && (/^\/schedules\/[^/]+\/(pause|resume)$/.test(path) || path === "/versions/retire" || path === "/versions/reinstate")) return "admin";
  if (path === "/alerts/rules") return "admin";
  if (path === "/runs/import" || /^\/runs\/[^/]+\/export$/.test(path)) return "admin";
  if (path === "/auth/tickets") return "read";
  return method === "GET" || method === "HEAD" ? "read" : "write";
}

const REFUSED = "The API token is malformed, unknown or revoked. Create a new one with `cairn token create`.";

/**
 * The token behind a ticket or session, still live: a revoked or expired token ends its tickets and
 * sessions too.
 */
export async function liveToken(store: Pick<TokenStore, "getToken">, tokenId: string | undefined, now: number): Promise<TokenRecord | undefined> {
  if (tokenId === undefined) return undefined;
  const record = await store.getToken(tokenId);
  if (!record || record.revokedAt !== null) return undefined;
  if (isExpired(record, now)) throw new TokenExpiredError(record.name, record.expiresAt!);
  return record;
}

/**
 * Token authentication: every request but the public ones needs a live token (401 otherwise) that
 * has the route's scope (403 otherwise), sent as `Authorization: Bearer <token>`, or as a dashboard
 * session (`Bearer cairn_session_…`), or, on a GET that cannot set headers (EventSource, a link), as
 * a one-time `?ticket=` from `POST /auth/tickets`. `?token=` is refused: a URL is written to access
 * logs. The token text is never logged or echoed: errors name neither it nor its id.
 */
export function registerTokenAuth(app: Hono, store: Pick<TokenStore, "getToken">, tickets: TicketBook = new TicketBook()): void {
  app.use("*", async (c: Context, next) => {
    if (isPublicPath(c.req.path)) return next();
    const record = await authenticate(c, store, tickets);
    // A namespaced token is never admin (issueToken refuses it); a record that says so anyway gets no admin power.
    const scopes = record.namespace === null ? record.scopes : record.scopes.filter((scope) => scope !== "admin");
    const principal = { actor: `token:${record.name}`, scopes: new Set(scopes), namespace: record.namespace, tokenId: record.id };
    requireScope(principal, scopeFor(c.req.method, c.req.path));
    setPrincipal(c, principal);
    return next();
  });
}

async function authenticate(c: Context, store: Pick<TokenStore, "getToken">, tickets: TicketBook): Promise<TokenRecord> {
  const now = Date.now();
  const ticket = c.req.query("ticket");
  if (ticket !== undefined) {
    if (c.req.method !== "GET")
      throw new UnauthorizedError("A ?ticket= is accepted on GET requests only (streams, links). Send other requests with `Authorization: Bearer <token>`.");
    const record = await liveToken(store, tickets.redeemTicket(ticket, now), now);
    if (!record)
      throw new UnauthorizedError(
        "The ticket is unknown, used or expired: a ticket works for one request within 60 s of `POST /auth/tickets`. Ask for a new one.",
      );
    return record;
  }
  const header = c.req.header("authorization");
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    if (c.req.query("token") !== undefined)
      throw new UnauthorizedError(
        "A token in the URL (?token=) is refused: URLs are written to proxy and server logs. Send `Authorization: Bearer <token>`, or, where headers cannot be set, a one-time ?ticket= from `POST /auth/tickets`.",
      );
    throw new UnauthorizedError();
  }
  const text = match[1]!;
  if (TicketBook.isSession(text)) {
    const record = await liveToken(store, tickets.session(text, now), now);
    if (!record)
      throw new UnauthorizedError(
        "The dashboard session is over: its token was revoked or expired, 12 h passed, or the server restarted. Sign in again with a token or a new link.",
      );
    return record;
  }
  const record = await verifyToken(store, text, now);
  if (!record) throw new UnauthorizedError(REFUSED);
  return record;
}
