/** API tokens (stored as hashes) and the audit log. Part of the {@link Store} port. */
export interface SecurityStore extends TokenStore, AuditStore {}

/** API tokens, stored as hashes: what token authentication and `cairn token` use. */
export interface TokenStore {
  /** Stores a new API token (only its hash). Throws if a token with this id exists. */
  createToken(token: TokenRecord): Promise<void>;
  /** Every token, revoked ones included, newest first (createdAt desc, id desc). */
  listTokens(): Promise<TokenRecord[]>;
  /**
   * The token with this id, revoked or not. Tokens are looked up by their public id and the caller
   * compares the secret's hash in constant time (looking up by hash would compare in the database).
   */
  getToken(id: string): Promise<TokenRecord | undefined>;
  /** Marks a token revoked at `now`. False when it does not exist or was already revoked (nothing changes). */
  revokeToken(id: string, now: number): Promise<boolean>;
}

/** The audit log of privileged actions: what the server's routes and the CLI's commands record, and `GET /audit` reads. */
export interface AuditStore {
  /** Appends one entry to the audit log; returns it with its id (increasing). */
  appendAudit(entry: NewAuditEntry): Promise<AuditEntry>;
  /** Audit entries, newest first (id desc), optionally before an id and filtered. */
  listAudit(query: ListAuditQuery): Promise<AuditEntry[]>;
}

/** What a token may do: `read` (GETs), `write` (start, events, cancel, retry, answer), `admin` (tokens, audit). */
export type TokenScope = "read" | "write" | "admin";
/** An API token as stored: never the secret itself, only its SHA-256. */
export interface TokenRecord {
  /** Public id, part of the token text (`cairn_<id>_<secret>`). */
  id: string;
  /** A label for people, and the actor recorded in the audit log. */
  name: string;
  /** Hex SHA-256 of the secret part. */
  hash: string;
  scopes: TokenScope[];
  /** When set, the token sees and acts only on runs whose id starts with `<namespace>/`. */
  namespace: string | null;
  createdAt: number;
  revokedAt: number | null;
  /** When the token stops working (ms since the epoch), or null for never. */
  expiresAt: number | null;
}
/** An entry to append to the audit log. */
export interface NewAuditEntry {
  at: number;
  /** Who: a token's name (`token:<name>`), or `cli:<user>`. */
  actor: string;
  /** What, e.g. `run.start`, `run.cancel`, `token.create`. */
  action: string;
  /** On what: a run id, a request id, a token id. */
  target: string | null;
  /** Anything else worth keeping (plain JSON); never secrets. */
  detail: Record<string, unknown> | null;
}
/** An audit log entry. */
export interface AuditEntry extends NewAuditEntry {
  id: number;
}
/** Filters of {@link Store.listAudit}. */
export interface ListAuditQuery {
  /** Only entries with a smaller id (the previous page's last id). */
  beforeId?: number;
  actor?: string;
  action?: string;
  target?: string;
  /** Default 50, at most 1000. */
  limit?: number;
}
