import type {
  AnswerBody,
  ApiHumanRequest,
  ApiJournalEntry,
  ApiRunCosts,
  ApiJournalPage,
  ApiRun,
  ApiRunPage,
  ApiVersion,
  ApiWorker,
  ForkBody,
  SendEventBody,
  StartRunBody,
} from "../core/api-schemas.js";
import type { ApiCostTotals } from "../core/cost-schemas.js";
import type { ScheduleActionResult, VersionActionBody, VersionActionResult } from "../core/console-schemas.js";
import type { ApiAuditEntry, ApiQueue, ApiSchedule, ApiToken, CreateTokenBody } from "../core/api-schemas.js";
import { CairnApiError, toApiError } from "./api-error.js";
import type { BulkResult, BulkTarget, ClientOptions, HumanRequestsQuery, RunFilterQuery, StreamDelta, StreamEnd, StreamOptions } from "./client-types.js";
import type { AlertRuleInput, ApiAlert, ApiAlertRules } from "../core/alert-schemas.js";
import type { ApiOutboxMessage } from "../core/outbox.js";
import type { RunStatus } from "../core/run.js";
import { parseSse } from "./sse.js";

export { CairnApiError } from "./api-error.js";
export type { BulkResult, BulkTarget, ClientOptions, HumanRequestsQuery, RunFilterQuery, StreamDelta, StreamEnd, StreamOptions } from "./client-types.js";

type Query = Record<string, string | number | string[] | undefined>;

/** The query parameters of a listing's filters. */
function runFilterQuery(query: RunFilterQuery) {
  return {
    status: query.status === undefined ? undefined : [query.status].flat().join(","),
    workflow: query.workflow,
    q: query.q === "" ? undefined : query.q,
    createdAfter: query.createdAfter === undefined ? undefined : +query.createdAfter,
    createdBefore: query.createdBefore === undefined ? undefined : +query.createdBefore,
    topLevel: query.topLevel ? "true" : undefined,
    tag: query.tags === undefined ? undefined : Object.entries(query.tags).map(([key, value]) => `${key}:${value}`),
  };
}

/**
 * A typed client of the Cairn HTTP API (`cairn/server`). Uses the global fetch; no server code.
 * @example
 * const cairn = new CairnClient({ baseUrl: "http://127.0.0.1:4000" });
 * const { run } = await cairn.startRun({ workflow: "research", input: { topic: "tides" }, runId: "thread-42" });
 * await cairn.stream(run.runId, { onEntry: (entry) => console.log(entry.seq, entry.kind) });
 */
export class CairnClient {
  private readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** `POST /runs`: starts a run; idempotent by runId (`created: false` for an existing one). */
  startRun(body: StartRunBody): Promise<{ created: boolean; run: ApiRun }> {
    return this.request("POST", "/runs", { body });
  }

  /** `GET /runs` */
  listRuns(query: RunFilterQuery & { cursor?: string; limit?: number } = {}): Promise<ApiRunPage> {
    return this.request("GET", "/runs", { query: { ...runFilterQuery(query), cursor: query.cursor, limit: query.limit } });
  }

  /** `GET /run-count`: how many runs {@link listRuns} lists with these filters over all pages (`exact: false`: a lower bound). */
  countRuns(query: RunFilterQuery = {}): Promise<{ total: number; exact: boolean }> {
    return this.request("GET", "/run-count", { query: runFilterQuery(query) });
  }

  /** `GET /workflows`: the workflows that have runs in the store (those this token may see), with how many. */
  listWorkflows(): Promise<{ workflows: { workflow: string; runs: number }[] }> {
    return this.request("GET", "/workflows");
  }

  /**
   * `POST /bulk/cancel`: cancels the given runs, or (`filter`) every unfinished run those filters
   * list (at most 1000), each audited like a single cancel.
   */
  bulkCancel(target: BulkTarget, reason?: string): Promise<BulkResult> {
    return this.request("POST", "/bulk/cancel", { body: { ...target, ...(reason === undefined ? {} : { reason }) } });
  }

  /** `POST /bulk/retry`: retries the given runs, or (`filter`) every failed run those filters list (at most 1000). */
  bulkRetry(target: BulkTarget): Promise<BulkResult> {
    return this.request("POST", "/bulk/retry", { body: target });
  }

  /** `GET /stuck-runs` */
  listStuckRuns(query: { graceMs?: number; limit?: number } = {}): Promise<{ runs: ApiRun[] }> {
    return this.request("GET", "/stuck-runs", { query });
  }

  /** `GET /runs/:id` */
  getRun(runId: string): Promise<ApiRun> {
    return this.request("GET", `/runs/${enc(runId)}`);
  }

  /**
   * `GET /runs/:id/values/:name`: the latest value the run published under `name` (`ctx.publish`),
   * read without waking the run; undefined when it has published none.
   */
  async getPublished<T = unknown>(runId: string, name: string): Promise<{ name: string; value: T; seq: number; at: string } | undefined> {
    try {
      return await this.request("GET", `/runs/${enc(runId)}/values/${enc(name)}`);
    } catch (error) {
      if (error instanceof CairnApiError && error.code === "VALUE_NOT_FOUND") return undefined;
      throw error;
    }
  }

  /**
   * `POST /runs/:id/requests/:name`: sends a request to the run's `ctx.handle(name)` handler and returns
   * its reply; idempotent by `requestId` (the same id gets the same reply, the handler runs once).
   */
  async sendRequest<R = unknown>(
    runId: string,
    name: string,
    payload?: unknown,
    options: { requestId?: string; timeoutMs?: number } = {},
  ): Promise<{ requestId: string; reply: R }> {
    return this.request("POST", `/runs/${enc(runId)}/requests/${enc(name)}`, { body: { payload: payload ?? null, ...options } });
  }

  /** `GET /runs/:id/journal`: one page of entries after `after`. */
  journal(runId: string, query: { after?: number; limit?: number } = {}): Promise<ApiJournalPage> {
    return this.request("GET", `/runs/${enc(runId)}/journal`, { query });
  }

  /**
   * `GET /costs`: per-workflow totals of worker time, step time, journal bytes, tool calls by tool, the
   * time people took and model spend, over the runs created in `[since, until)` (default: the last 24
   * hours; the newest 2,000 runs at most, `truncated` says when there were more).
   */
  costs(query: { since?: Date | number; until?: Date | number; workflow?: string } = {}): Promise<ApiCostTotals> {
    const at = (value: Date | number | undefined) => (value === undefined ? undefined : value instanceof Date ? value.getTime() : value);
    return this.request("GET", "/costs", { query: { since: at(query.since), until: at(query.until), workflow: query.workflow } });
  }

  /**
   * `GET /runs/:id/costs`: worker and step time, journal bytes, tool calls by tool, the time people took, and model spend.
   * With `includeChildren`, `children` also sums them over the run's child runs (and theirs).
   */
  runCosts(runId: string, options: { includeChildren?: boolean } = {}): Promise<ApiRunCosts> {
    return this.request("GET", `/runs/${enc(runId)}/costs`, options.includeChildren ? { query: { includeChildren: "true" } } : {});
  }

  /** `GET /runs/:id/journal/:seq`: one entry, whole (a journal page elides entries over 8 KiB: `elided` gives their size). */
  journalEntry(runId: string, seq: number): Promise<ApiJournalEntry> {
    return this.request("GET", `/runs/${enc(runId)}/journal/${seq}`);
  }

  /**
   * The whole value of a field that a listing elided (`elided` set, the value null): a run's
   * `"input"` or `"output"` (from `GET /runs/:id`), or a journal entry's `data` (`{ seq }`, from
   * `GET /runs/:id/journal/:seq`). Values are as the API shows them: secrets stay redacted.
   * @example
   * const page = await cairn.listRuns();
   * for (const run of page.runs) if (run.elided?.input) console.log(await cairn.wholeValue(run.runId, "input"));
   */
  async wholeValue(runId: string, field: "input" | "output" | { seq: number }): Promise<unknown> {
    if (typeof field === "object") return (await this.journalEntry(runId, field.seq)).data;
    const run = await this.getRun(runId);
    return field === "input" ? run.input : run.output;
  }

  /**
   * `POST /auth/tickets` (servers with `--auth tokens`): a one-time ticket that stands in for this
   * client's token on one GET request within 60 s, as `?ticket=`, where a header cannot be sent
   * (a browser's EventSource, a link). The token itself never goes in a URL.
   */
  createTicket(): Promise<{ ticket: string; expiresAt: string }> {
    return this.request("POST", "/auth/tickets", { body: {} });
  }

  /**
   * The URL of a run's live stream for an `EventSource` (which cannot send headers). When this
   * client sends an `Authorization` header, the URL carries a fresh one-time `?ticket=` instead of
   * the token: open it within 60 s, once (ask again to reconnect). {@link entries} needs none of this.
   * @example
   * const source = new EventSource(await cairn.streamUrl("thread-42"));
   * source.addEventListener("entry", (e) => console.log(JSON.parse(e.data)));
   */
  async streamUrl(runId: string, options: { after?: number } = {}): Promise<string> {
    const authorized = Object.keys(this.options.headers ?? {}).some((name) => name.toLowerCase() === "authorization");
    const ticket = authorized ? (await this.createTicket()).ticket : undefined;
    return this.url(`/runs/${enc(runId)}/stream`, { after: options.after, ticket });
  }

  /** `POST /runs/:id/events`: idempotent by eventId. */
  sendEvent(runId: string, event: SendEventBody): Promise<{ eventId: string; duplicate: boolean }> {
    return this.request("POST", `/runs/${enc(runId)}/events`, { body: event });
  }

  /** `POST /runs/:id/cancel` */
  cancel(runId: string, reason?: string): Promise<ApiRun> {
    return this.request("POST", `/runs/${enc(runId)}/cancel`, { body: reason === undefined ? {} : { reason } });
  }

  /**
   * `POST /runs/:id/fork`: a new run with this run's journal up to `atSeq` (one step result optionally
   * patched), continuing under the server's current code. `created: false` when the same fork existed.
   * @example
   * const { run } = await client.fork("thread-42", { atSeq: 12, patch: { seq: 9, result: "fixed" } });
   */
  fork(runId: string, body: ForkBody): Promise<{ created: boolean; run: ApiRun }> {
    return this.request("POST", `/runs/${enc(runId)}/fork`, { body });
  }

  /** `POST /runs/:id/retry` */
  retry(runId: string): Promise<ApiRun> {
    return this.request("POST", `/runs/${enc(runId)}/retry`, { body: {} });
  }

  /** `GET /human-requests`: one page (default 1000); see {@link CairnClient.listHumanRequestPage} for the next ones. */
  async listHumanRequests(query: HumanRequestsQuery = {}): Promise<ApiHumanRequest[]> {
    return (await this.listHumanRequestPage(query)).requests;
  }

  /** `GET /human-requests` with `nextCursor` (present when more match): pass it as `cursor` for the next page. */
  listHumanRequestPage(query: HumanRequestsQuery = {}): Promise<{ requests: ApiHumanRequest[]; nextCursor?: string }> {
    return this.request<{ requests: ApiHumanRequest[]; nextCursor?: string }>("GET", "/human-requests", { query: { ...query } });
  }

  /** `POST /human-requests/:id/answer`. Answering again is a no-op: the request comes back with its first answer. */
  async answer(requestId: string, answer: AnswerBody): Promise<ApiHumanRequest> {
    const { request } = await this.request<{ request: ApiHumanRequest }>("POST", `/human-requests/${enc(requestId)}/answer`, { body: answer });
    return request;
  }

  /** `GET /versions`: runs per workflow version and status, with drained flags (see `cairn versions`). */
  async listVersions(): Promise<ApiVersion[]> {
    const page = await this.request<{ versions: ApiVersion[] }>("GET", "/versions");
    return page.versions;
  }

  /** `GET /schedules`: every schedule with its status, next fire time and last run. */
  async listSchedules(): Promise<ApiSchedule[]> {
    return (await this.request<{ schedules: ApiSchedule[] }>("GET", "/schedules")).schedules;
  }

  /** `POST /schedules/:name/pause` (admin): stops firing it until resumed; audited. `changed` is false when it was already paused. */
  pauseSchedule(name: string): Promise<ScheduleActionResult> {
    return this.request("POST", `/schedules/${enc(name)}/pause`, { body: {} });
  }

  /** `POST /schedules/:name/resume` (admin): fires it again from its next tick after now; audited. */
  resumeSchedule(name: string): Promise<ScheduleActionResult> {
    return this.request("POST", `/schedules/${enc(name)}/resume`, { body: {} });
  }

  /** `POST /versions/retire` (admin): no worker claims the version's runs any more; audited. */
  retireVersion(ref: VersionActionBody): Promise<VersionActionResult> {
    return this.request("POST", "/versions/retire", { body: ref });
  }

  /** `POST /versions/reinstate` (admin): workers claim the version's runs again; audited. */
  reinstateVersion(ref: VersionActionBody): Promise<VersionActionResult> {
    return this.request("POST", "/versions/reinstate", { body: ref });
  }

  /** `GET /queues`: flow-control queues, their limits and how many runs are running, waiting and suspended. */
  async listQueues(): Promise<ApiQueue[]> {
    return (await this.request<{ queues: ApiQueue[] }>("GET", "/queues")).queues;
  }

  /** `GET /tokens` (admin): API tokens, revoked ones included; never their secrets. */
  async listTokens(): Promise<ApiToken[]> {
    return (await this.request<{ tokens: ApiToken[] }>("GET", "/tokens")).tokens;
  }

  /** `POST /tokens` (admin): creates a token; `token` is its text, shown only here. */
  createToken(body: CreateTokenBody): Promise<{ token: string; record: ApiToken }> {
    return this.request("POST", "/tokens", { body });
  }

  /** `POST /tokens/:id/revoke` (admin): the token stops working at once, with its tickets and sessions. */
  async revokeToken(tokenId: string): Promise<ApiToken> {
    return (await this.request<{ record: ApiToken }>("POST", `/tokens/${enc(tokenId)}/revoke`)).record;
  }

  /** `GET /audit` (admin): the audit log, newest first; pass `nextBefore` as `beforeId` for the next page. */
  listAudit(
    query: { limit?: number; beforeId?: number; actor?: string; action?: string; target?: string } = {},
  ): Promise<{ entries: ApiAuditEntry[]; nextBefore?: number }> {
    return this.request("GET", "/audit", { query });
  }

  /** `GET /workers` */
  async listWorkers(query: { staleAfterMs?: number } = {}): Promise<ApiWorker[]> {
    const page = await this.request<{ workers: ApiWorker[] }>("GET", "/workers", { query });
    return page.workers;
  }

  /** `GET /outbox` (admin scope): outbox messages, by default the undelivered ones. `status`: e.g. `"dead"`, `"pending,dead"` or `"all"`. */
  async listOutbox(query: { status?: string; topic?: string; runId?: string; afterId?: number; limit?: number } = {}): Promise<ApiOutboxMessage[]> {
    const page = await this.request<{ messages: ApiOutboxMessage[] }>("GET", "/outbox", { query });
    return page.messages;
  }

  /** `POST /outbox/:id/retry` (admin): re-queues a dead message; `applied` is false when it was not dead. */
  retryOutboxMessage(messageId: string): Promise<{ message: ApiOutboxMessage; applied: boolean }> {
    return this.request("POST", `/outbox/${encodeURIComponent(messageId)}/retry`);
  }

  /** `GET /alerts`: recent alerts, newest first, with their delivery status (not for namespaced tokens). */
  async listAlerts(query: { limit?: number; rule?: string } = {}): Promise<ApiAlert[]> {
    const page = await this.request<{ alerts: ApiAlert[] }>("GET", "/alerts", { query });
    return page.alerts;
  }

  /** `GET /alerts/rules` (admin): the rule set every server on the store evaluates. */
  getAlertRules(): Promise<ApiAlertRules> {
    return this.request("GET", "/alerts/rules");
  }

  /** `POST /alerts/rules` (admin): replaces the rule set (audited); `[]` removes every rule. */
  setAlertRules(rules: AlertRuleInput[]): Promise<ApiAlertRules> {
    return this.request("POST", "/alerts/rules", { body: { rules } });
  }

  /** `GET /health` */
  health(): Promise<{ status: "ok" }> {
    return this.request("GET", "/health");
  }

  /** `GET /openapi.json` */
  openApi(): Promise<Record<string, unknown>> {
    return this.request("GET", "/openapi.json");
  }

  /**
   * The run's journal entries, live, as an async iterator: each entry once, in seq order, until the
   * run is terminal and its last entry was yielded. A dropped connection (or a server restart) is
   * resumed after the last seq seen. Errors the server answers for the request itself (404 unknown
   * run, 400) are thrown; aborting `signal` ends the iteration quietly.
   * @example
   * for await (const entry of cairn.entries("thread-42", { signal })) console.log(entry.seq, entry.kind);
   */
  async *entries(runId: string, options: StreamOptions = {}): AsyncGenerator<ApiJournalEntry, StreamEnd> {
    let lastSeq = options.after ?? 0;
    let attempt = 0;
    const base = options.reconnectDelayMs ?? 250;
    const max = options.maxReconnectDelayMs ?? 5000;
    for (;;) {
      if (options.signal?.aborted) return { lastSeq };
      let reason: unknown;
      try {
        const response = await this.fetchFn(this.url(`/runs/${enc(runId)}/stream`, { preview: options.preview ? "true" : undefined }), {
          headers: { ...this.options.headers, accept: "text/event-stream", "last-event-id": String(lastSeq) },
          ...(options.signal ? { signal: options.signal } : {}),
        });
        if (!response.ok) {
          const error = await toApiError(response);
          if (response.status < 500) throw error;
          reason = error;
        } else if (response.body) {
          for await (const event of parseSse(response.body)) {
            if (event.event === "entry") {
              const entry = JSON.parse(event.data) as ApiJournalEntry;
              if (entry.seq <= lastSeq) continue; // never twice, whatever the server does
              lastSeq = entry.seq;
              attempt = 0;
              yield entry;
            } else if (event.event === "delta") {
              options.onDelta?.(JSON.parse(event.data) as StreamDelta);
            } else if (event.event === "end") {
              const end = JSON.parse(event.data) as { status: RunStatus; lastSeq: number };
              if (end.lastSeq <= lastSeq) return { lastSeq, status: end.status };
            } else if (event.event === "error") {
              const { error } = JSON.parse(event.data) as { error: { code: string; message: string } };
              reason = new CairnApiError(error.code, error.message, 503);
            }
          }
          reason ??= new Error("the stream ended before the run did");
        }
      } catch (error) {
        if (options.signal?.aborted) return { lastSeq };
        if (error instanceof CairnApiError && error.status < 500) throw error;
        reason = error;
      }
      attempt++;
      options.onReconnect?.({ after: lastSeq, attempt, reason });
      if (!(await sleep(Math.min(max, base * 2 ** (attempt - 1)), options.signal))) return { lastSeq };
    }
  }

  /**
   * Follows the run's journal (see {@link entries}) and calls `onEntry` for each entry, in order.
   * Resolves when the run is terminal (with its status) or when `signal` aborts.
   */
  async stream(runId: string, options: StreamOptions & { onEntry: (entry: ApiJournalEntry) => void | Promise<void> }): Promise<StreamEnd> {
    const iterator = this.entries(runId, options);
    for (;;) {
      const next = await iterator.next();
      if (next.done) return next.value;
      await options.onEntry(next.value);
    }
  }

  private url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (Array.isArray(value)) for (const item of value) params.append(key, item);
      else if (value !== undefined) params.set(key, String(value));
    }
    const search = params.toString();
    return `${this.baseUrl}${path}${search ? `?${search}` : ""}`;
  }

  private async request<T>(method: "GET" | "POST", path: string, init: { query?: Query; body?: unknown } = {}): Promise<T> {
    const response = await this.fetchFn(this.url(path, init.query), {
      method,
      headers: { ...this.options.headers, accept: "application/json", ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    if (!response.ok) throw await toApiError(response);
    return (await response.json()) as T;
  }
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

/** Resolves true after `ms`, or false at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
