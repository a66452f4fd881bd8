import type { Hono } from "hono";
import { answerBody, humanRequestsQuery, requestIdParam } from "../../core/api-schemas.js";
import { HumanRequestNotFoundError } from "../../core/errors.js";
import type { HumanAnswer } from "../../core/journal.js";
import type { Engine } from "../../engine/engine.js";
import { json, parse, queryOf, readJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";
import { humanRequestView } from "../wire.js";
import { inputSchemas } from "../human-input.js";
import { audit } from "../auth/audit.js";
import { canSee, principalOf } from "../auth/principal.js";

/** Registers the human-request routes: list and answer. */
export function registerHumanRequestRoutes(app: Hono, engine: Engine, options: ResolvedServerOptions): void {
  app.get("/human-requests", async (c) => {
    const query = parse(humanRequestsQuery, queryOf(c), "query");
    const principal = principalOf(c);
    const requests = (await engine.listHumanRequests(query)).filter((request) => canSee(principal, request.runId));
    const inputs = await inputSchemas(engine.store, requests);
    return json(c, { requests: requests.map((request) => humanRequestView(request, inputs.get(request.requestId) ?? null)) });
  });

  app.post("/human-requests/:id/answer", async (c) => {
    const { id } = parse(requestIdParam, c.req.param(), "path");
    const answer = parse(answerBody, await readJson(c, options.bodyLimitBytes), "body") as HumanAnswer;
    // Outside the caller's namespace a request does not exist (404, like an unknown one).
    const existing = await engine.store.getHumanRequest(id);
    if (existing && !canSee(principalOf(c), existing.runId)) throw new HumanRequestNotFoundError(id);
    const { duplicate } = await engine.respondToHuman(id, answer);
    const request = await engine.getHumanRequest(id);
    if (!request) throw new HumanRequestNotFoundError(id);
    if (!duplicate) {
      await audit(c, engine.store, "human.answer", id, {
        runId: request.runId,
        action: answer.action,
        ...(answer.option === undefined ? {} : { option: answer.option }),
      });
    }
    // A second answer is a no-op: the request, with its first answer, and duplicate: true.
    const inputs = await inputSchemas(engine.store, [request]);
    return json(c, { request: humanRequestView(request, inputs.get(request.requestId) ?? null), duplicate });
  });
}
