import type { AuditEntry, ListAuditQuery, NewAuditEntry, SecurityStore, TokenRecord } from "../../core/store.js";
import { auditQuery, toAudit, toToken, tokenParams, type AuditRow, type TokenRow } from "../common/security-rows.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import { APPEND_AUDIT, GET_TOKEN, INSERT_TOKEN, LIST_TOKENS, REVOKE_TOKEN } from "./sqlite-security-queries.js";

/** The {@link SecurityStore} part of {@link SqliteStore}: API tokens and the audit log. */
export class SqliteSecurity implements SecurityStore {
  constructor(private readonly c: SqliteConnection) {}

  /** See {@link Store.createToken}. */
  async createToken(token: TokenRecord): Promise<void> {
    this.c.q.prepared(INSERT_TOKEN).run(...tokenParams(token));
  }

  /** See {@link Store.listTokens}. */
  async listTokens(): Promise<TokenRecord[]> {
    return (this.c.q.prepared(LIST_TOKENS).all() as TokenRow[]).map(toToken);
  }

  /** See {@link Store.getToken}. */
  async getToken(id: string): Promise<TokenRecord | undefined> {
    const row = this.c.q.prepared(GET_TOKEN).get(id) as TokenRow | undefined;
    return row && toToken(row);
  }

  /** See {@link Store.revokeToken}. */
  async revokeToken(id: string, now: number): Promise<boolean> {
    return this.c.q.prepared(REVOKE_TOKEN).run(now, id).changes === 1;
  }

  /** See {@link Store.appendAudit}. */
  async appendAudit(entry: NewAuditEntry): Promise<AuditEntry> {
    const row = this.c.q
      .prepared(APPEND_AUDIT)
      .get(entry.at, entry.actor, entry.action, entry.target, entry.detail === null ? null : JSON.stringify(entry.detail)) as AuditRow;
    return toAudit(row);
  }

  /** See {@link Store.listAudit}. */
  async listAudit(query: ListAuditQuery): Promise<AuditEntry[]> {
    const { text, params } = auditQuery(query, () => "?");
    return (this.c.q.prepared(text).all(...params) as AuditRow[]).map(toAudit);
  }
}
