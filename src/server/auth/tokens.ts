import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { TokenExpiredError, ValidationError } from "../../core/errors.js";
import { toMs, type Duration } from "../../core/duration.js";
import { NO_CONTROL_CHARACTERS } from "../../core/schemas.js";
import type { TokenRecord, TokenScope, TokenStore } from "../../core/store.js";

/** `cairn_<16 hex id>_<43 base64url secret>`: the id is public (listed, audited), the secret is not. */
const TOKEN_TEXT = /^cairn_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

/** What {@link issueToken} needs. */
export interface NewToken {
  name: string;
  scopes: TokenScope[];
  namespace?: string | null;
  /** How long the token works from `now`: ms, or a duration such as `"30d"`. Omitted: it never expires. */
  expiresIn?: Duration | number;
}

/** Hex SHA-256 of a token's secret part: all the store keeps. */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/**
 * Creates an API token: 256 random bits of secret, stored as its SHA-256 only. The returned
 * `token` text is the only copy of the secret: show it once and never log it.
 * A namespaced token cannot be `admin` (an admin could mint tokens for every namespace).
 */
export async function issueToken(
  store: Pick<TokenStore, "listTokens" | "createToken">,
  request: NewToken,
  now: number,
): Promise<{ token: string; record: TokenRecord }> {
  const scopes = [...new Set(request.scopes)].sort() as TokenScope[];
  const namespace = request.namespace ?? null;
  if (!NO_CONTROL_CHARACTERS.test(request.name) || request.name.length === 0 || request.name.length > 128)
    throw new ValidationError("A token name must be 1-128 characters without control characters (ESC, BEL, DEL…): it is shown in lists and the audit log.");
  const expiresAt = request.expiresIn === undefined ? null : now + toMs(request.expiresIn);
  if (expiresAt !== null && !(expiresAt > now && Number.isSafeInteger(expiresAt)))
    throw new ValidationError(`A token's expiry must be a positive duration such as "30d" or "12h", got ${JSON.stringify(request.expiresIn)}.`);
  if (scopes.length === 0) throw new ValidationError("A token needs at least one scope: read, write or admin.");
  if (namespace !== null && scopes.includes("admin"))
    throw new ValidationError("A namespaced token cannot have the admin scope: an admin can create tokens for any namespace. Drop --namespace or admin.");
  // The audit log names actors by token name: two live tokens with one name could not be told apart.
  const taken = (await store.listTokens()).find((token) => token.revokedAt === null && !isExpired(token, now) && token.name === request.name);
  if (taken)
    throw new ValidationError(
      `A live token is already named "${request.name}" (id ${taken.id}). Pick another name, or revoke that one first (cairn token revoke ${taken.id}).`,
    );
  const id = randomBytes(8).toString("hex");
  const secret = randomBytes(32).toString("base64url");
  const record: TokenRecord = { id, name: request.name, hash: hashSecret(secret), scopes, namespace, createdAt: now, revokedAt: null, expiresAt };
  await store.createToken(record);
  return { token: `cairn_${id}_${secret}`, record };
}

/**
 * The live token this text stands for, or undefined when it is malformed, unknown or revoked.
 * Looked up by its public id; the secret's hash is compared in constant time. A token past its
 * expiry throws {@link TokenExpiredError} (only once the secret matched: an expiry is no
 * one else's business).
 */
export async function verifyToken(store: Pick<TokenStore, "getToken">, text: string, now = Date.now()): Promise<TokenRecord | undefined> {
  const match = TOKEN_TEXT.exec(text);
  if (!match) return undefined;
  const record = await store.getToken(match[1]!);
  if (!record || record.revokedAt !== null) return undefined;
  const expected = Buffer.from(record.hash, "hex");
  const actual = Buffer.from(hashSecret(match[2]!), "hex");
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
  if (isExpired(record, now)) throw new TokenExpiredError(record.name, record.expiresAt!);
  return record;
}

/** True when the token has an expiry and it has passed. */
export function isExpired(record: TokenRecord, now: number): boolean {
  return record.expiresAt !== null && record.expiresAt <= now;
}

/** A token as shown by the API and the CLI: never its hash. */
export function tokenView(record: TokenRecord) {
  return {
    id: record.id,
    name: record.name,
    scopes: record.scopes,
    namespace: record.namespace,
    createdAt: new Date(record.createdAt),
    revokedAt: record.revokedAt === null ? null : new Date(record.revokedAt),
    expiresAt: record.expiresAt === null ? null : new Date(record.expiresAt),
  };
}
