import type { Hono } from "hono";
import { answerBody, humanRequestsQuery, requestIdParam } from "../../core/api-schemas.js";
import { HumanRequestNotFoundError } from "../../core/errors.js";
import type { HumanAnswer } from "../../core/journal.js";
import type { Engine } from "../../engine/engine.js";
import { json, parse, queryOf, readJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";
import { humanRequestView } from "../wire.js";

/** Registers the human-request routes: list and answer. */
export function registerHumanRequestRoutes(app: Hono, engine: Engine, options: ResolvedServerOptions): void {
  app.get("/human-requests", async (c) => {
    const query = parse(humanRequestsQuery, queryOf(c), "query");
    const requests = await engine.listHumanRequests(query);
    return json(c, { requests: requests.map(humanRequestView) });
  });

  app.post("/human-requests/:id/answer", async (c) => {
    const { id } = parse(requestIdParam, c.req.param(), "path");
    const answer = parse(answerBody, await readJson(c, options.bodyLimitBytes), "body") as HumanAnswer;
    const { duplicate } = await engine.respondToHuman(id, answer);
    const request = await engine.store.getHumanRequest(id);
    if (!request) throw new HumanRequestNotFoundError(id);
    // A second answer is a no-op: the request, with its first answer, and duplicate: true.
    return json(c, { request: humanRequestView(request), duplicate });
  });
}
