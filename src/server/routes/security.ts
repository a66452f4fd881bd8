import type { Hono } from "hono";
import { auditQuery, createTokenBody, tokenIdParam } from "../../core/api-schemas.js";
import { TokenNotFoundError } from "../../core/errors.js";
import type { AuditEntry, AuditStore, TokenStore } from "../../core/store.js";
import type { Duration } from "../../core/duration.js";
import { audit } from "../auth/audit.js";
import { issueToken, tokenView } from "../auth/tokens.js";
import { json, parse, queryOf, readJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";

/** Registers the admin routes: API tokens (create, list, revoke) and the audit log. */
/** `store`: the API tokens and the audit log, which these admin routes manage and read. */
export function registerSecurityRoutes(app: Hono, options: ResolvedServerOptions, store: TokenStore & AuditStore): void {
  app.post("/tokens", async (c) => {
    const body = parse(createTokenBody, await readJson(c, options.bodyLimitBytes), "body");
    const { token, record } = await issueToken(store, { ...body, expiresIn: body.expiresIn as Duration | number | undefined }, Date.now());
    await audit(c, store, "token.create", record.id, {
      name: record.name,
      scopes: record.scopes,
      namespace: record.namespace,
      expiresAt: record.expiresAt,
    });
    // The only time the token text leaves the server.
    return json(c, { token, record: tokenView(record) }, 201);
  });

  app.get("/tokens", async (c) => {
    parse(tokenIdParam.partial().strict(), queryOf(c), "query");
    return json(c, { tokens: (await store.listTokens()).map(tokenView) });
  });

  app.post("/tokens/:id/revoke", async (c) => {
    const { id } = parse(tokenIdParam, c.req.param(), "path");
    if (!(await store.revokeToken(id, Date.now()))) throw new TokenNotFoundError(id);
    await audit(c, store, "token.revoke", id);
    const record = await store.getToken(id);
    if (!record) throw new TokenNotFoundError(id);
    return json(c, { record: tokenView(record) });
  });

  app.get("/audit", async (c) => {
    const query = parse(auditQuery, queryOf(c), "query");
    const limit = query.limit ?? 50;
    const entries = await store.listAudit({ ...query, limit });
    const last = entries[entries.length - 1];
    return json(c, { entries: entries.map(auditView), ...(entries.length === limit && last ? { nextBefore: last.id } : {}) });
  });
}

/** An audit entry as the API shows it. */
export function auditView(entry: AuditEntry) {
  return { ...entry, at: new Date(entry.at) };
}
