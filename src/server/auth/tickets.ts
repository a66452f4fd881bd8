import { createHash, randomBytes } from "node:crypto";

/** How long a ticket from `POST /auth/tickets` may wait for its one use. */
export const TICKET_TTL_MS = 60_000;

/** How long a dashboard session opened with a ticket lasts (never past its token's own expiry). */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** Tickets and sessions held at once; past it the oldest are dropped (their holders ask again). */
const MAX_HELD = 10_000;

const TICKET_TEXT = /^cairn_ticket_[A-Za-z0-9_-]{43}$/;
const SESSION_TEXT = /^cairn_session_[A-Za-z0-9_-]{43}$/;

interface Held {
  tokenId: string;
  expiresAt: number;
}

/**
 * One-time tickets and the dashboard sessions they open, so an API token never has to travel in a
 * URL (where proxies, browser history and `Referer` headers keep it).
 *
 * - A **ticket** (`cairn_ticket_…`) is asked for with the token in the `Authorization` header and
 *   stands in for it in the URL of one GET request (`?ticket=`): an EventSource stream, a download
 *   link. It works once, within {@link TICKET_TTL_MS}.
 * - A **session** (`cairn_session_…`) is what the dashboard trades a ticket for when it is opened
 *   as `/ui/?ticket=…`: a bearer credential kept in the tab, valid for {@link SESSION_TTL_MS}.
 *
 * Both act as the token they came from, and stop working the moment it is revoked or expires (the
 * caller checks the token on every use). They live in this server process's memory only: only the
 * SHA-256 of each is kept, and a restart ends them all.
 */
export class TicketBook {
  private readonly tickets = new Map<string, Held>();
  private readonly sessions = new Map<string, Held>();

  /** A ticket for one GET request as this token, within {@link TICKET_TTL_MS} of `now`. */
  issueTicket(tokenId: string, now: number): { ticket: string; expiresAt: number } {
    const ticket = `cairn_ticket_${randomBytes(32).toString("base64url")}`;
    const expiresAt = now + TICKET_TTL_MS;
    hold(this.tickets, ticket, { tokenId, expiresAt }, now);
    return { ticket, expiresAt };
  }

  /** The token a ticket stands for, taking the ticket (it works once); undefined when unknown, used or expired. */
  redeemTicket(text: string, now: number): string | undefined {
    if (!TICKET_TEXT.test(text)) return undefined;
    const key = hashOf(text);
    const held = this.tickets.get(key);
    this.tickets.delete(key);
    return held && held.expiresAt > now ? held.tokenId : undefined;
  }

  /** A session for the dashboard as this token, ending at `limit` if that comes first (the token's expiry). */
  openSession(tokenId: string, now: number, limit: number | null): { token: string; expiresAt: number } {
    const token = `cairn_session_${randomBytes(32).toString("base64url")}`;
    const expiresAt = Math.min(now + SESSION_TTL_MS, limit ?? Infinity);
    hold(this.sessions, token, { tokenId, expiresAt }, now);
    return { token, expiresAt };
  }

  /** The token a session stands for, or undefined when it is unknown or over. */
  session(text: string, now: number): string | undefined {
    if (!SESSION_TEXT.test(text)) return undefined;
    const held = this.sessions.get(hashOf(text));
    return held && held.expiresAt > now ? held.tokenId : undefined;
  }

  /** True when this text has the shape of a session (it is then never checked as an API token). */
  static isSession(text: string): boolean {
    return text.startsWith("cairn_session_");
  }
}

function hashOf(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function hold(map: Map<string, Held>, text: string, held: Held, now: number): void {
  for (const [key, value] of map) if (value.expiresAt <= now) map.delete(key);
  while (map.size >= MAX_HELD) {
    const oldest = map.keys().next();
    if (oldest.done) break;
    map.delete(oldest.value);
  }
  map.set(hashOf(text), held);
}
