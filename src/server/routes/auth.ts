import type { Hono } from "hono";
import { sessionBody, ticketBody } from "../../core/api-schemas.js";
import { UnauthorizedError } from "../../core/errors.js";
import type { TokenStore } from "../../core/store.js";
import { liveToken } from "../auth/middleware.js";
import { principalOf } from "../auth/principal.js";
import type { TicketBook } from "../auth/tickets.js";
import { json, parse, readJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";

/**
 * Registers the ticket exchange of token auth: `POST /auth/tickets` (with the token in the
 * `Authorization` header) gives a one-time ticket for one GET request; `POST /auth/session` trades
 * a ticket for a dashboard session. See {@link TicketBook}.
 */
/** `store`: the API tokens, to check the token behind a ticket. */
export function registerAuthRoutes(app: Hono, options: ResolvedServerOptions, tickets: TicketBook, store: Pick<TokenStore, "getToken">): void {
  app.post("/auth/tickets", async (c) => {
    parse(ticketBody, await readJson(c, options.bodyLimitBytes), "body");
    const { tokenId } = principalOf(c);
    // Without token auth there is nothing for a ticket to stand for (this route then does not exist).
    if (tokenId === null) throw new UnauthorizedError();
    const { ticket, expiresAt } = tickets.issueTicket(tokenId, Date.now());
    return json(c, { ticket, expiresAt: new Date(expiresAt) }, 201);
  });

  app.post("/auth/session", async (c) => {
    const body = parse(sessionBody, await readJson(c, options.bodyLimitBytes), "body");
    const now = Date.now();
    const record = await liveToken(store, tickets.redeemTicket(body.ticket, now), now);
    if (!record) throw new UnauthorizedError("The ticket is unknown, used or expired: a ticket works once, within 60 s. Ask for a new link.");
    const { token, expiresAt } = tickets.openSession(record.id, now, record.expiresAt);
    return json(c, { token, expiresAt: new Date(expiresAt) }, 201);
  });
}
