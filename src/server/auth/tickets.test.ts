import { describe, expect, it } from "vitest";
import { SESSION_TTL_MS, TICKET_TTL_MS, TicketBook } from "./tickets.js";

describe("TicketBook", () => {
  it("a ticket works once, and not after its 60 s", () => {
    const book = new TicketBook();
    const t0 = 1_000_000;
    const once = book.issueTicket("tok1", t0);
    expect(once.expiresAt).toBe(t0 + TICKET_TTL_MS);
    expect(book.redeemTicket(once.ticket, t0 + 1)).toBe("tok1");
    expect(book.redeemTicket(once.ticket, t0 + 2)).toBeUndefined();
    const late = book.issueTicket("tok1", t0);
    expect(book.redeemTicket(late.ticket, t0 + TICKET_TTL_MS)).toBeUndefined();
    expect(book.redeemTicket(`cairn_ticket_${"A".repeat(43)}`, t0)).toBeUndefined();
    expect(book.redeemTicket("not a ticket", t0)).toBeUndefined();
  });

  it("a session lasts 12 h, or until its token's expiry when that comes first; it is not a ticket", () => {
    const book = new TicketBook();
    const t0 = 5_000_000;
    const long = book.openSession("tok1", t0, null);
    expect(long.expiresAt).toBe(t0 + SESSION_TTL_MS);
    expect(book.session(long.token, t0 + SESSION_TTL_MS - 1)).toBe("tok1");
    expect(book.session(long.token, t0 + SESSION_TTL_MS)).toBeUndefined();
    const short = book.openSession("tok2", t0, t0 + 1000);
    expect(book.session(short.token, t0 + 999)).toBe("tok2");
    expect(book.session(short.token, t0 + 1000)).toBeUndefined();
    expect(book.redeemTicket(long.token, t0)).toBeUndefined();
    expect(TicketBook.isSession(long.token)).toBe(true);
  });
});
