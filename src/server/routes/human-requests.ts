import type { Hono } from "hono";
import { answerBody, humanRequestsQuery, requestIdParam } from "../../core/api-schemas.js";
import { HumanRequestNotFoundError } from "../../core/errors.js";
import type { HumanAnswer } from "../../core/journal.js";
import type { Engine } from "../../engine/engine.js";
import type { AuditStore, HumanRequestStore, JournalStore } from "../../core/store.js";
import { json, parse, queryOf, readJson } from "../http.js";
import type { ResolvedServerOptions } from "../options.js";
import { humanRequestView } from "../wire.js";
import { requestDetails } from "../human-input.js";
import { audit } from "../auth/audit.js";
import { ANONYMOUS, canSee, principalOf } from "../auth/principal.js";

/** Registers the human-request routes: list and answer. */
/** `store`: the audit log for answers, the unredacted request an answer checks, and the journal reads behind request details. */
export function registerHumanRequestRoutes(
  app: Hono,
  engine: Engine,
  options: ResolvedServerOptions,
  store: Pick<AuditStore, "appendAudit"> & Pick<HumanRequestStore, "getHumanRequest"> & Pick<JournalStore, "readJournalForResume">,
): void {
  app.get("/human-requests", async (c) => {
    const query = parse(humanRequestsQuery, queryOf(c), "query");
    const { namespace } = principalOf(c);
    // A namespaced token sees only its namespace: filtered in the store's query, so pages stay full.
    let runIdPrefix = query.runIdPrefix;
    if (namespace !== null) {
      const own = `${namespace}/`;
      if (runIdPrefix === undefined || own.startsWith(runIdPrefix)) runIdPrefix = own;
      else if (!runIdPrefix.startsWith(own)) return json(c, { requests: [] });
    }
    const page = await engine.listHumanRequestPage({ ...query, ...(runIdPrefix === undefined ? {} : { runIdPrefix }) });
    const details = await requestDetails(store, page.requests);
    return json(c, {
      requests: page.requests.map((request) => humanRequestView(request, details.get(request.requestId))),
      ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    });
  });

  app.post("/human-requests/:id/answer", async (c) => {
    const { id } = parse(requestIdParam, c.req.param(), "path");
    const answer = parse(answerBody, await readJson(c, options.bodyLimitBytes), "body") as HumanAnswer;
    // Outside the caller's namespace a request does not exist (404, like an unknown one).
    const principal = principalOf(c);
    const existing = await store.getHumanRequest(id);
    if (!existing || !canSee(principal, existing.runId)) throw new HumanRequestNotFoundError(id);
    // Under token auth the answerer is the token (as in the audit log), never what the body says.
    const claimedBy = answer.by;
    if (principal !== ANONYMOUS) answer.by = principal.actor;
    const { duplicate } = await engine.respondToHuman(id, answer);
    const request = await engine.getHumanRequest(id);
    if (!request) throw new HumanRequestNotFoundError(id);
    if (!duplicate) {
      await audit(c, store, "human.answer", id, {
        runId: request.runId,
        action: answer.action,
        ...(answer.option === undefined ? {} : { option: answer.option }),
        ...(claimedBy === undefined || claimedBy === answer.by ? {} : { claimedBy }),
      });
    }
    // A second answer is a no-op: the request, with its first answer, and duplicate: true.
    const details = await requestDetails(store, [request]);
    return json(c, { request: humanRequestView(request, details.get(request.requestId)), duplicate });
  });
}
