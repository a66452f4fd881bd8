import { AUDIT_COLUMNS, TOKEN_COLUMNS } from "../common/security-rows.js";

// The statements of API tokens and the audit log for the PostgreSQL store (see postgres-security.ts).
// Plain texts (not named `Sql`): they run rarely, so `pg` does not keep them prepared.

export const INSERT_TOKEN = `INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`;
export const LIST_TOKENS = `SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created_at DESC, id DESC`;
export const GET_TOKEN = `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = $1`;
export const REVOKE_TOKEN = "UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id";
export const APPEND_AUDIT = `INSERT INTO audit_log (at, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5) RETURNING ${AUDIT_COLUMNS}`;
