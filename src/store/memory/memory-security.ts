import type { AuditEntry, ListAuditQuery, NewAuditEntry, SecurityStore, TokenRecord } from "../../core/store.js";
import { compareText, pageLimit } from "../common/list-query.js";
import type { MemoryTables } from "./memory-tables.js";

/** The {@link SecurityStore} part of {@link MemoryStore}: API tokens and the audit log. */
export class MemorySecurity implements SecurityStore {
  constructor(private readonly t: MemoryTables) {}

  /** See {@link Store.createToken}. */
  async createToken(token: TokenRecord): Promise<void> {
    if (this.t.tokens.has(token.id)) throw new Error(`A token with id "${token.id}" exists.`);
    this.t.tokens.set(token.id, copyToken(token));
  }

  /** See {@link Store.listTokens}. */
  async listTokens(): Promise<TokenRecord[]> {
    const tokens = [...this.t.tokens.values()];
    tokens.sort((a, b) => b.createdAt - a.createdAt || compareText(b.id, a.id));
    return tokens.map(copyToken);
  }

  /** See {@link Store.getToken}. */
  async getToken(id: string): Promise<TokenRecord | undefined> {
    const token = this.t.tokens.get(id);
    return token && copyToken(token);
  }

  /** See {@link Store.revokeToken}. */
  async revokeToken(id: string, now: number): Promise<boolean> {
    const token = this.t.tokens.get(id);
    if (!token || token.revokedAt !== null) return false;
    this.t.tokens.set(id, { ...token, revokedAt: now });
    return true;
  }

  /** See {@link Store.appendAudit}. */
  async appendAudit(entry: NewAuditEntry): Promise<AuditEntry> {
    const row: AuditEntry = { ...entry, detail: entry.detail === null ? null : structuredClone(entry.detail), id: this.t.audit.length + 1 };
    this.t.audit.push(row);
    return { ...row };
  }

  /** See {@link Store.listAudit}. */
  async listAudit(query: ListAuditQuery): Promise<AuditEntry[]> {
    const limit = pageLimit(query.limit);
    const out: AuditEntry[] = [];
    for (let i = this.t.audit.length - 1; i >= 0 && out.length < limit; i--) {
      const row = this.t.audit[i]!;
      if (query.beforeId !== undefined && row.id >= query.beforeId) continue;
      if (query.actor !== undefined && row.actor !== query.actor) continue;
      if (query.action !== undefined && row.action !== query.action) continue;
      if (query.target !== undefined && row.target !== query.target) continue;
      out.push({ ...row, detail: row.detail === null ? null : structuredClone(row.detail) });
    }
    return out;
  }
}

function copyToken(token: TokenRecord): TokenRecord {
  return { ...token, scopes: [...token.scopes] };
}
