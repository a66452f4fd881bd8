import { z } from "zod";
import { RunNotFoundError } from "../core/errors.js";
import { REDACTED, type RunSecrets } from "../core/redact.js";
import type { HumanAnswer, WaitDescriptor } from "../core/journal.js";
import { isTerminal, type RunRecord } from "../core/run.js";
import { runIdRefSchema as RUN_REF, runStatusSchema as statusSchema } from "../core/schemas.js";
import { encodeCursor } from "../store/common/list-query.js";
import { decode, decodeSecrets, encode, type SerializedError } from "../core/serialize.js";
import type { HumanRequest, ListRunsQuery, Store } from "../core/store.js";
import { decodeOr, unreadableMessage } from "../core/unreadable.js";
import { elidedSize, PREVIEW_BYTES } from "../core/payloads.js";
import { checkTags } from "../core/tags.js";
import { check } from "./check-input.js";
import type { JournalEntryView, ListRunsOptions, RunInfo } from "./engine.js";
import { runLinks } from "./live-runs.js";
import { countSearch, searchRuns } from "./run-search.js";
import { COUNT_SCAN_LIMIT } from "./engine.js";
import type { SecretViews } from "./secret-views.js";

/** The store query of a listing's options, checked. */
function runQuery(options: ListRunsOptions): ListRunsQuery {
  const statuses = options.status === undefined ? undefined : check(z.array(statusSchema), [options.status].flat(), "listRuns: status");
  const limit = options.limit === undefined ? undefined : check(z.number().int().min(1).max(1000), options.limit, "listRuns: limit");
  const query = {
    status: statuses,
    workflow: options.workflow,
    ...(options.runIdPrefix === undefined ? {} : { runIdPrefix: check(z.string().max(1000), options.runIdPrefix, "listRuns: runIdPrefix") }),
    ...(options.q === undefined || options.q === "" ? {} : { q: check(z.string().max(200), options.q, "listRuns: q") }),
    createdAfter: options.createdAfter === undefined ? undefined : +options.createdAfter,
    createdBefore: options.createdBefore === undefined ? undefined : +options.createdBefore,
    ...(options.tags === undefined ? {} : { tags: checkTags(options.tags, "listRuns") }),
    ...(options.topLevel === true ? { parentRunId: null } : {}),
    ...(options.excludeSystem === true ? { excludeSystem: true } : {}),
    limit,
    cursor: options.cursor,
    ...(options.previewBytes === undefined ? {} : { previewBytes: options.previewBytes }),
  };
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as ListRunsQuery;
}

/** Reads a run's row, or throws RunNotFoundError. */
export async function requireRun(store: Pick<Store, "getRun">, runId: string): Promise<RunRecord> {
  check(RUN_REF, runId, "runId");
  const run = await store.getRun(runId);
  if (!run) throw new RunNotFoundError(runId);
  return run;
}

/**
 * Runs, journals and human requests as the API shows them: decoded, with secrets redacted
 * (core/redact.ts), large payloads elided in previews, and unreadable rows as placeholders.
 */
export class RunViews {
  constructor(
    private readonly store: Pick<Store, "getRun" | "listRuns" | "countRuns" | "readJournal" | "listStuckRuns" | "getRunTags" | "readCompaction">,
    private readonly secrets: SecretViews,
  ) {}

  /** A run row as views show it: secrets redacted (see core/redact.ts). */
  async view(run: RunRecord, previewBytes?: number): Promise<RunInfo> {
    const facts = await this.secrets.of(run.runId);
    const elided = previewBytes === undefined ? undefined : elidedPayloads(run, previewBytes);
    const info = toRunInfo(elided ? { ...run, ...(elided.input ? { input: "null" } : {}), ...(elided.output ? { output: "null" } : {}) } : run, facts);
    if (elided) info.elided = elided;
    if (facts.forkedFrom) info.forkedFrom = facts.forkedFrom;
    return info;
  }

  async getRun(runId: string): Promise<RunInfo> {
    const run = await requireRun(this.store, runId);
    const [view, links, compaction] = await Promise.all([this.view(run), runLinks(this.store, run), this.store.readCompaction(runId)]);
    return Object.assign(view, links, compaction ? { compaction } : {});
  }

  async listRuns(options: ListRunsOptions): Promise<{ runs: RunInfo[]; nextCursor?: string }> {
    const query = runQuery(options);
    // One undecodable row is shown as a placeholder; the rest of the page is unaffected.
    const view = (run: RunRecord) => this.view(run, options.previewBytes).catch((error: unknown) => unreadableRun(run, error));
    // A text search matches what views show (secrets redacted), never the stored text.
    if (query.q !== undefined) return capBytes(await searchRuns(this.store, { ...query, q: query.q }, view), options.maxBytes);
    const page = await this.store.listRuns(query);
    // A preview page reads each run's journal (for its secrets) one run at a time, to bound memory.
    const runs: RunInfo[] = [];
    if (options.previewBytes === undefined) runs.push(...(await Promise.all(page.runs.map(view))));
    else for (const run of page.runs) runs.push(await view(run));
    return capBytes({ runs, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }, options.maxBytes);
  }

  /** How many runs a listing's filters match: exact from the store, or (with a text search over views) up to {@link COUNT_SCAN_LIMIT} candidates. */
  async countRuns(options: Omit<ListRunsOptions, "limit" | "cursor" | "previewBytes" | "maxBytes"> = {}): Promise<{ total: number; exact: boolean }> {
    const { limit: _limit, cursor: _cursor, ...query } = runQuery(options);
    if (query.q === undefined) {
      const groups = await this.store.countRuns(query);
      return { total: groups.reduce((sum, group) => sum + group.count, 0), exact: true };
    }
    const view = (run: RunRecord) => this.view(run, PREVIEW_BYTES).catch((error: unknown) => unreadableRun(run, error));
    return countSearch(this.store, { ...query, q: query.q }, view, COUNT_SCAN_LIMIT);
  }

  async redact<T>(runId: string, value: T): Promise<T> {
    return (await this.secrets.of(check(RUN_REF, runId, "redact: runId"))).value(value);
  }

  async journal(runId: string, options: { afterSeq?: number; limit?: number; previewBytes?: number }): Promise<JournalEntryView[]> {
    await requireRun(this.store, runId);
    const entries = await this.store.readJournal(runId, options);
    // Read after the entries, so the run's secrets include every one of them.
    const secrets = await this.secrets.of(runId);
    return entries.map((e) => {
      const view: JournalEntryView = { seq: e.seq, kind: e.kind, opKey: e.opKey, data: null, epoch: e.epoch, at: new Date(e.at) };
      const elided = options.previewBytes === undefined ? undefined : elidedSize(e.payload, options.previewBytes);
      if (elided !== undefined) return { ...view, elided };
      view.data = decodeOr(
        () => secrets.entryData(e.kind, e.payload),
        null,
        `run "${runId}" journal seq ${e.seq}`,
        (m) => (view.unreadable = m),
      );
      return view;
    });
  }

  async listStuckRuns(now: number, options: { graceMs?: number; limit?: number }): Promise<RunInfo[]> {
    const runs = await this.store.listStuckRuns(now, options.graceMs ?? 60_000, options.limit ?? 100);
    return Promise.all(runs.map((run) => this.view(run)));
  }

  /** A human request as views show it: its question, context and (for a secret request) answer redacted. */
  async human(request: HumanRequest): Promise<HumanRequest> {
    const secrets = await this.secrets.of(request.runId);
    if (!secrets.empty || request.context?.includes("$cairn") || request.answer?.includes("$cairn")) {
      const answer = request.answer === null ? null : secrets.decode<HumanAnswer>(request.answer);
      const view: HumanRequest = {
        ...request,
        question: secrets.value(request.question),
        answer: answer === null ? null : encode(secrets.isSecretRequest(request.requestId) ? secrets.answer(answer) : answer),
      };
      if (request.context !== undefined) view.context = encode(secrets.decode(request.context));
      return view;
    }
    return request;
  }
}

/** A run row as the API shows it: payloads decoded with `secrets` redacted (values marked `secret()` always are). */
export function toRunInfo(run: RunRecord, secrets?: RunSecrets): RunInfo {
  const decodeView = <T>(text: string | null): T => (secrets ? secrets.decode<T>(text) : decodeSecrets<T>(text, () => REDACTED));
  const info: RunInfo = {
    runId: run.runId,
    workflow: run.workflow,
    version: run.version,
    status: run.status,
    input: decodeView(run.input),
    parentRunId: run.parentRunId,
    wakeAt: run.wakeAt === null ? null : new Date(run.wakeAt),
    waitingFor: run.waitingFor ? decode<WaitDescriptor[]>(run.waitingFor) : [],
    leaseOwner: run.leaseOwner,
    leaseExpiresAt: run.leaseExpiresAt === null ? null : new Date(run.leaseExpiresAt),
    leaseEpoch: run.leaseEpoch,
    entries: run.lastSeq,
    createdAt: new Date(run.createdAt),
    updatedAt: new Date(run.updatedAt),
    finishedAt: run.finishedAt === null ? null : new Date(run.finishedAt),
  };
  if (run.output !== null) info.output = decodeView(run.output);
  if (run.error !== null) info.error = decodeView<SerializedError>(run.error);
  if (isTerminal(run.status)) info.waitingFor = [];
  return info;
}

/** A run whose payloads (or journal) cannot be decoded, as a listing shows it: payloads left out, since they cannot be redacted. */
function unreadableRun(run: RunRecord, error: unknown): RunInfo {
  return { ...toRunInfo({ ...run, input: "null", output: null, error: null, waitingFor: null }), unreadable: unreadableMessage(`run "${run.runId}"`, error) };
}

/** A human request that cannot be decoded, as a listing shows it: nothing that may need redacting. */
export function unreadableHuman(request: HumanRequest, error: unknown): HumanRequest {
  const { context: _context, ...rest } = request;
  return { ...rest, question: "[unreadable]", answer: null, unreadable: unreadableMessage(`human request "${request.requestId}"`, error) };
}

/** The sizes of a run's input and output too large for a preview of `limit` bytes; undefined when both fit. */
function elidedPayloads(run: RunRecord, limit: number): { input?: number; output?: number } | undefined {
  const input = elidedSize(run.input, limit);
  const output = run.output === null ? undefined : elidedSize(run.output, limit);
  if (input === undefined && output === undefined) return undefined;
  return { ...(input === undefined ? {} : { input }), ...(output === undefined ? {} : { output }) };
}

/** Cuts a page of runs before its JSON passes `maxBytes` (keeping at least one run), with a cursor after the last one kept. */
function capBytes(page: { runs: RunInfo[]; nextCursor?: string }, maxBytes: number | undefined): { runs: RunInfo[]; nextCursor?: string } {
  if (maxBytes === undefined) return page;
  let total = 0;
  for (let i = 0; i < page.runs.length; i++) {
    total += Buffer.byteLength(encode(page.runs[i]), "utf8") + 1; // about the size the API writes
    if (total > maxBytes && i > 0) {
      const last = page.runs[i - 1]!;
      return { runs: page.runs.slice(0, i), nextCursor: encodeCursor({ createdAt: last.createdAt.getTime(), runId: last.runId }) };
    }
  }
  return page;
}
