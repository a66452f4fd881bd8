import type { AuditEntry, ListAuditQuery, TokenRecord, TokenScope } from "../../core/store.js";
import { pageLimit } from "./list-query.js";

/**
 * Rows and queries of the `tokens` and `audit_log` tables (migrations 0004, and expiry in a later one), shared by the SQLite and
 * PostgreSQL stores: columns are selected by their snake_case names and mapped here, so only the
 * placeholders differ between the two.
 */

export const TOKEN_COLUMNS = "id, name, hash, scopes, namespace, created_at, revoked_at, expires_at";
export const AUDIT_COLUMNS = "id, at, actor, action, target, detail";

export interface TokenRow {
  id: string;
  name: string;
  hash: string;
  scopes: string;
  namespace: string | null;
  created_at: number;
  revoked_at: number | null;
  expires_at: number | null;
}

export interface AuditRow {
  id: number;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  detail: string | null;
}

export function toToken(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    name: row.name,
    hash: row.hash,
    scopes: JSON.parse(row.scopes) as TokenScope[],
    namespace: row.namespace,
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}

/** Insert parameters in column order of {@link TOKEN_COLUMNS}. */
export function tokenParams(token: TokenRecord): unknown[] {
  return [token.id, token.name, token.hash, JSON.stringify(token.scopes), token.namespace, token.createdAt, token.revokedAt, token.expiresAt];
}

export function toAudit(row: AuditRow): AuditEntry {
  return {
    id: Number(row.id),
    at: Number(row.at),
    actor: row.actor,
    action: row.action,
    target: row.target,
    detail: row.detail === null ? null : (JSON.parse(row.detail) as Record<string, unknown>),
  };
}

/** The SELECT of {@link Store.listAudit}, with `placeholder(n)` giving the n-th (1-based) parameter marker. */
export function auditQuery(query: ListAuditQuery, placeholder: (n: number) => string): { text: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    params.push(value);
    where.push(`${clause} ${placeholder(params.length)}`);
  };
  if (query.beforeId !== undefined) add("id <", query.beforeId);
  if (query.actor !== undefined) add("actor =", query.actor);
  if (query.action !== undefined) add("action =", query.action);
  if (query.target !== undefined) add("target =", query.target);
  params.push(pageLimit(query.limit));
  const text = `SELECT ${AUDIT_COLUMNS} FROM audit_log ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY id DESC LIMIT ${placeholder(params.length)}`;
  return { text, params };
}
