import { z } from "zod";
import { printable } from "./schemas.js";
import { timestamp, wholeNumber } from "./wire-formats.js";

// The HTTP API's schemas of security: API tokens, the audit log, one-time tickets and dashboard
// sessions (re-exported by core/api-schemas.ts, the wire format's index).

// ── requests ───────────────────────────────────────────────────────────────

/** A token's scopes. */
export const tokenScopeSchema = z.enum(["read", "write", "admin"]);

/** A token namespace: the token sees only runs whose id starts with `<namespace>/`. */
export const namespaceSchema = z
  .string()
  .min(1, "must not be empty")
  .max(128, "must be at most 128 characters")
  .regex(/^[A-Za-z0-9._-]+$/, "may hold only letters, digits, '.', '_' and '-'");

/** `POST /tokens` */
export const createTokenBody = z
  .object({
    name: printable(z.string().min(1, "must not be empty").max(128, "must be at most 128 characters")).describe(
      "A label; the audit log names the token by it.",
    ),
    scopes: z
      .array(tokenScopeSchema)
      .min(1, "give at least one scope")
      .describe("read: GETs; write: start, events, cancel, retry, answer; admin: tokens and audit."),
    namespace: namespaceSchema.optional().describe("Restricts the token to runs whose id starts with `<namespace>/`."),
    expiresIn: z
      .union([z.number().int().positive(), z.string().regex(/^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)\s*$/, 'use a duration with its unit, such as "30d" or "12h"')])
      .optional()
      .describe('How long the token works, in ms or as "30d", "12h"; past it requests get 401 TOKEN_EXPIRED. Omit for a token that never expires.'),
  })
  .strict();

/** `/tokens/:id` */
export const tokenIdParam = z.object({ id: z.string().min(1).max(64) });

/** `GET /audit` */
export const auditQuery = z
  .object({
    limit: wholeNumber(1, 1000).optional(),
    beforeId: wholeNumber(1, Number.MAX_SAFE_INTEGER).optional().describe("Entries older than this id (the previous page's nextBefore)."),
    actor: z.string().min(1).max(256).optional(),
    action: z.string().min(1).max(128).optional(),
    target: z.string().min(1).max(1024).optional(),
  })
  .strict();

// ── responses ──────────────────────────────────────────────────────────────

/** An API token as the API shows it: never its secret or hash. */
export const apiTokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(tokenScopeSchema),
  namespace: z.string().nullable(),
  createdAt: timestamp,
  revokedAt: timestamp.nullable(),
  expiresAt: timestamp.nullable().describe("When the token stops working; null for never."),
});

export const createTokenResponse = z.object({
  token: z.string().describe("The token text, shown only in this response: `cairn_<id>_<secret>`."),
  record: apiTokenSchema,
});

/** `POST /auth/tickets`: no parameters. */
export const ticketBody = z.object({}).strict();

/** A one-time ticket for one GET request (`?ticket=`). */
export const ticketResponse = z.object({
  ticket: z.string().describe("`cairn_ticket_…`: pass it as `?ticket=` on one GET request (an EventSource stream, a link), within 60 s."),
  expiresAt: timestamp.describe("When the ticket stops working if unused."),
});

/** `POST /auth/session`: trade a ticket for a dashboard session. */
export const sessionBody = z.object({ ticket: z.string().min(1).max(200).describe("A ticket from `POST /auth/tickets`; it is used up.") }).strict();

/** A dashboard session: a bearer credential that acts as the ticket's token. */
export const sessionResponse = z.object({
  token: z.string().describe("`cairn_session_…`: send it as `Authorization: Bearer …`; it ends with the token, after 12 h, or when the server restarts."),
  expiresAt: timestamp,
});

export const tokenListSchema = z.object({ tokens: z.array(apiTokenSchema) });

/** An audit log entry. */
export const apiAuditEntrySchema = z.object({
  id: z.number().int(),
  at: timestamp,
  actor: z.string(),
  action: z.string(),
  target: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()).nullable(),
});

export const auditPageSchema = z.object({ entries: z.array(apiAuditEntrySchema), nextBefore: z.number().int().optional() });

/** An API token as `GET /tokens` lists it. */
export type ApiToken = z.output<typeof apiTokenSchema>;
/** An audit log entry as `GET /audit` lists it. */
export type ApiAuditEntry = z.output<typeof apiAuditEntrySchema>;
/** `POST /tokens` body. */
export type CreateTokenBody = z.input<typeof createTokenBody>;
