import { AUDIT_COLUMNS, TOKEN_COLUMNS } from "../common/security-rows.js";

// The statements of API tokens and the audit log for the SQLite store (see sqlite-security.ts).

export const INSERT_TOKEN = `INSERT INTO tokens (${TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
export const LIST_TOKENS = `SELECT ${TOKEN_COLUMNS} FROM tokens ORDER BY created_at DESC, id DESC`;
export const GET_TOKEN = `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE id = ?`;
export const REVOKE_TOKEN = "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL";
export const APPEND_AUDIT = `INSERT INTO audit_log (at, actor, action, target, detail) VALUES (?, ?, ?, ?, ?) RETURNING ${AUDIT_COLUMNS}`;
