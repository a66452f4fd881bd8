import type { AuditEntry, ListAuditQuery, NewAuditEntry, SecurityStore, TokenRecord } from "../../core/store.js";
import { auditQuery, toAudit, toToken, tokenParams, type AuditRow, type TokenRow } from "../common/security-rows.js";
import type { PostgresConnection } from "./postgres-connection.js";
import { APPEND_AUDIT, GET_TOKEN, INSERT_TOKEN, LIST_TOKENS, REVOKE_TOKEN } from "./postgres-security-queries.js";

/** The {@link SecurityStore} part of {@link PostgresStore}: API tokens and the audit log. */
export class PostgresSecurity implements SecurityStore {
  constructor(private readonly db: PostgresConnection) {}

  /** See {@link Store.createToken}. */
  async createToken(token: TokenRecord): Promise<void> {
    await this.db.query(INSERT_TOKEN, tokenParams(token));
  }

  /** See {@link Store.listTokens}. */
  async listTokens(): Promise<TokenRecord[]> {
    return (await this.db.query<TokenRow>(LIST_TOKENS)).map(toToken);
  }

  /** See {@link Store.getToken}. */
  async getToken(id: string): Promise<TokenRecord | undefined> {
    const [row] = await this.db.query<TokenRow>(GET_TOKEN, [id]);
    return row && toToken(row);
  }

  /** See {@link Store.revokeToken}. */
  async revokeToken(id: string, now: number): Promise<boolean> {
    const rows = await this.db.query(REVOKE_TOKEN, [now, id]);
    return rows.length === 1;
  }

  /** See {@link Store.appendAudit}. */
  async appendAudit(entry: NewAuditEntry): Promise<AuditEntry> {
    const [row] = await this.db.query<AuditRow>(APPEND_AUDIT, [
      entry.at,
      entry.actor,
      entry.action,
      entry.target,
      entry.detail === null ? null : JSON.stringify(entry.detail),
    ]);
    if (!row) throw new Error("PostgreSQL did not return the audit entry.");
    return toAudit(row);
  }

  /** See {@link Store.listAudit}. */
  async listAudit(query: ListAuditQuery): Promise<AuditEntry[]> {
    const { text, params } = auditQuery(query, (n) => `$${n}`);
    return (await this.db.query<AuditRow>(text, params)).map(toAudit);
  }
}
