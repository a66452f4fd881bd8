import type { JournalCompaction } from "../../core/compaction.js";
import { isCairnError, ValidationError } from "../../core/errors.js";
import type { EntryData, EntryKind, HumanAnswer, JournalEntry, NewEntry } from "../../core/journal.js";
import { PayloadCorruptError, PayloadKeyMissingError } from "../../core/payload-errors.js";
import {
  blobRef,
  DEFAULT_INLINE_LIMIT,
  elidedMarker,
  elidedSize,
  encMarker,
  litMarker,
  looksLikeMarker,
  mayBeMarker,
  PLAIN_ENTRY_KINDS,
  parseMarker,
  sha256Hex,
  withSupersedes,
  type PayloadCodec,
} from "../../core/payloads.js";
import { isCheckpoint } from "../../core/resume.js";
import type { OutboxMessage } from "../../core/outbox.js";
import type { RunRecord } from "../../core/run.js";
import { byteLength, decodeKeepingSecrets, encode, StoredText } from "../../core/serialize.js";
import type { CopiedEntry, HumanRequest, InboxEvent, NewInboxEvent, NewRun, PayloadBlob, RunFilter, RunImport, RunWrite, Store } from "../../core/store.js";
import { peekKeyId } from "./aes-gcm-codec.js";
import { withToolCallValues } from "../common/agent-rows.js";
import type { PayloadOptions } from "./payload-options.js";

export { inlineLimitFromEnv, type PayloadOptions } from "./payload-options.js";

/** Journal entries {@link Store.readRunRows} resolves between two turns of the event loop. */
const RESOLVE_SLICE = 8;

/** Fields of entry data that stores project into other rows, and whether they may be offloaded there. */
const PROJECTED: Partial<Record<EntryKind, { field: string; offload: boolean }>> = {
  "run.completed": { field: "output", offload: true },
  "run.failed": { field: "error", offload: false },
  "run.compensated": { field: "error", offload: false },
  "run.compensation_failed": { field: "error", offload: false },
  "run.dead": { field: "error", offload: false },
  "child.started": { field: "input", offload: true },
  "human.requested": { field: "context", offload: false },
  "human.answered": { field: "answer", offload: false },
  "outbox.emitted": { field: "payload", offload: false },
};

type Blobs = PayloadBlob[] | null;

const WRAPPED = Symbol("cairn.payloads");
/** How a marker looks inside a `run.created` payload. */
const NESTED_INPUT = '"input":{"$cairn":"';

/**
 * Wraps a store so large payloads are offloaded to content-addressed blobs and, with a codec,
 * every payload is encrypted; reads resolve both transparently and verify them. Methods the
 * wrapper does not know are passed through to `store` untouched.
 * @example
 * const store = withPayloads(await openStore("sqlite:app.db"), { inlineLimit: 16 * 1024 });
 */
export function withPayloads(store: Store, options: PayloadOptions = {}): Store {
  // A store wrapped already (e.g. passed to createEngine) keeps its own settings.
  if (WRAPPED in store) return store;
  const layer = new PayloadStore(store, options);
  const forwarded = new Map<PropertyKey, unknown>();
  return new Proxy(layer, {
    get(target, prop, receiver) {
      if (prop in target) return Reflect.get(target, prop, receiver);
      if (!forwarded.has(prop)) {
        const value = Reflect.get(store, prop);
        forwarded.set(prop, typeof value === "function" ? value.bind(store) : value);
      }
      return forwarded.get(prop);
    },
    has: (target, prop) => prop in target || prop in store,
  }) as unknown as Store;
}

/** Implements the methods that carry payloads; the Proxy in {@link withPayloads} forwards the rest. */
class PayloadStore implements Partial<Store> {
  readonly [WRAPPED] = true;
  readonly url: string;
  private readonly limit: number;
  private readonly codec: PayloadCodec | null;
  now?: () => Promise<number>;
  onWake?: (listener: () => void) => () => void;

  constructor(
    private readonly inner: Store,
    options: PayloadOptions,
  ) {
    const limit = options.inlineLimit ?? DEFAULT_INLINE_LIMIT;
    if (!(limit === Infinity || (Number.isInteger(limit) && limit >= 0))) {
      throw new ValidationError(`payloads.inlineLimit must be a whole number of bytes (or Infinity), not ${String(limit)}.`);
    }
    this.limit = limit;
    this.codec = options.codec ?? null;
    this.url = inner.url;
    if (inner.now) this.now = inner.now.bind(inner);
    if (inner.onWake) this.onWake = inner.onWake.bind(inner);
  }

  migrate = () => this.inner.migrate();
  close = () => this.inner.close();

  // ── writes ──

  async createRun(run: NewRun, now: number) {
    const result = await this.inner.createRun(await this.putRun(run), now);
    return { ...result, run: await this.resolveRun(result.run) };
  }

  async createRuns(runs: readonly NewRun[], now: number) {
    const stored = await Promise.all(runs.map((run) => this.putRun(run)));
    const results = await this.inner.createRuns(stored, now);
    return Promise.all(results.map(async (result) => ({ ...result, run: await this.resolveRun(result.run) })));
  }

  async createRunWithJournal(run: NewRun, entries: readonly CopiedEntry[], now: number, compaction?: JournalCompaction) {
    const blobs: PayloadBlob[] = [...(run.blobs ?? [])];
    const stored = { ...run, input: await this.put(run.input, blobs) };
    const copies = await Promise.all(
      entries.map(async (entry) => ({ ...entry, payload: await this.put(entry.payload, blobs), ...(await this.agentRowData(entry)) })),
    );
    if (blobs.length > 0) stored.blobs = blobs;
    const result = await this.inner.createRunWithJournal(stored, copies, now, compaction);
    return { ...result, run: await this.resolveRun(result.run) };
  }

  async commit(writes: RunWrite[], now: number) {
    if (!this.codec && !writes.some((write) => write.entries.some((entry) => this.needsWork(entry.payload)))) return this.inner.commit(writes, now);
    const stored = await Promise.all(
      writes.map(async (write) => {
        const blobs: PayloadBlob[] = [...(write.blobs ?? [])];
        const entries = await Promise.all(write.entries.map((entry) => this.putEntry(entry, blobs)));
        return blobs.length > 0 ? { ...write, entries, blobs } : { ...write, entries };
      }),
    );
    return this.inner.commit(stored, now);
  }

  async controlRun(runId: string, allowed: Parameters<Store["controlRun"]>[1], entry: NewEntry, now: number) {
    const result = await this.inner.controlRun(runId, allowed, await this.putEntry(entry, null), now);
    return { ...result, run: await this.resolveRun(result.run) };
  }

  async sendEvent(event: NewInboxEvent, now: number) {
    const blobs: PayloadBlob[] = [...(event.blobs ?? [])];
    const payload = await this.put(event.payload, blobs);
    return this.inner.sendEvent(blobs.length > 0 ? { ...event, payload, blobs } : { ...event, payload }, now);
  }

  async answerHuman(requestId: string, answer: HumanAnswer, now: number) {
    // Stores write `encode(answer)`; a marker object encodes to the marker itself.
    const text = encode(answer);
    const stored = await this.put(text, null);
    return this.inner.answerHuman(requestId, stored === text ? answer : (new StoredText(stored) as unknown as HumanAnswer), now);
  }

  // ── reads ──

  getRun = async (runId: string) => {
    const run = await this.inner.getRun(runId);
    return run && this.resolveRun(run);
  };
  listRuns = async (query: Parameters<Store["listRuns"]>[0]) => {
    const page = await this.inner.listRuns(query);
    return { ...page, runs: await this.resolveRuns(page.runs, query.previewBytes) };
  };
  listStuckRuns = async (now: number, graceMs: number, limit?: number) => this.resolveRuns(await this.inner.listStuckRuns(now, graceMs, limit));
  claimRuns = async (request: Parameters<Store["claimRuns"]>[0]) => this.resolveRuns(await this.inner.claimRuns(request));
  readJournal = async (runId: string, options?: { afterSeq?: number; limit?: number; previewBytes?: number }) =>
    this.resolveEntries(await this.inner.readJournal(runId, options), options?.previewBytes);
  readJournalForResume = async (runId: string) => this.resolveEntries(await this.inner.readJournalForResume(runId));
  pendingEvents = async (runId: string, type: string, limit?: number) => this.resolveInbox(await this.inner.pendingEvents(runId, type, limit));
  listInbox = async (runId: string) => this.resolveInbox(await this.inner.listInbox(runId));
  getHumanRequest = async (requestId: string) => {
    const request = await this.inner.getHumanRequest(requestId);
    return request && (await this.resolveHumans([request]))[0];
  };
  listHumanRequests = async (query: Parameters<Store["listHumanRequests"]>[0]) => this.resolveHumans(await this.inner.listHumanRequests(query));

  listPrunableRuns = async (query: Parameters<Store["listPrunableRuns"]>[0]) => this.resolveRuns(await this.inner.listPrunableRuns(query));

  /** An export carries plain payloads, so it imports into a store with other keys or limits. */
  readRunRows = async (runId: string) => {
    const rows = await this.inner.readRunRows(runId);
    if (!rows) return undefined;
    // A long journal of large payloads (an export) is resolved a few entries at a time, with a turn
    // of the event loop between: the process keeps answering other requests meanwhile.
    const resolveJournal = async () => {
      const journal: JournalEntry[] = [];
      for (let i = 0; i < rows.journal.length; i += RESOLVE_SLICE) {
        if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        journal.push(...(await this.resolveEntries(rows.journal.slice(i, i + RESOLVE_SLICE))));
      }
      return journal;
    };
    const [run, journal, inbox, humanRequests] = await Promise.all([
      this.resolveRun(rows.run),
      resolveJournal(),
      this.resolveInbox(rows.inbox as InboxEvent[]),
      this.resolveHumans(rows.humanRequests),
    ]);
    return { run, journal, inbox: inbox as RunImport["inbox"], humanRequests, ...(rows.compaction ? { compaction: rows.compaction } : {}) };
  };

  /** Imported payloads are sealed with this store's codec; they stay inline (the import path writes no blobs). */
  importRun = async (rows: RunImport) => {
    const seal = async (text: string | null) => (text === null ? null : this.put(text, null));
    const run = { ...rows.run, input: (await seal(rows.run.input))!, output: await seal(rows.run.output), error: await seal(rows.run.error) };
    const journal = await Promise.all(
      rows.journal.map(async (entry) => ({ ...entry, payload: (await seal(entry.payload))!, ...(await this.agentRowData(entry)) })),
    );
    const inbox = await Promise.all(rows.inbox.map(async (event) => ({ ...event, payload: (await seal(event.payload))! })));
    const humanRequests = await Promise.all(
      rows.humanRequests.map(async (request) => ({
        ...request,
        answer: await seal(request.answer),
        ...(request.context === undefined ? {} : { context: (await seal(request.context))! }),
      })),
    );
    return this.inner.importRun({ run, journal, inbox, humanRequests, ...(rows.compaction ? { compaction: rows.compaction } : {}) } as RunImport);
  };

  claimOutbox = async (request: Parameters<Store["claimOutbox"]>[0]) => this.resolveOutbox(await this.inner.claimOutbox(request));
  listOutbox = async (query: Parameters<Store["listOutbox"]>[0]) => this.resolveOutbox(await this.inner.listOutbox(query));
  getOutboxMessage = async (messageId: string) => {
    const message = await this.inner.getOutboxMessage(messageId);
    return message && (await this.resolveOutbox([message]))[0];
  };
  retryOutbox = async (messageId: string, now: number) => {
    const result = await this.inner.retryOutbox(messageId, now);
    return { ...result, message: (await this.resolveOutbox([result.message]))[0]! };
  };

  // ── passed through ──

  countRuns = (filter?: RunFilter) => this.inner.countRuns(filter);
  listRunEntries = async (query: Parameters<Store["listRunEntries"]>[0]) => {
    const rows = await this.inner.listRunEntries(query);
    const entries = await this.resolveEntries(rows.map((row) => row.entry));
    return rows.map((row, i) => ({ ...row, entry: entries[i]! }));
  };
  searchJournal = (runId: string, query: string, limit: number) => this.inner.searchJournal(runId, query, limit);
  renewLeases = (request: Parameters<Store["renewLeases"]>[0]) => this.inner.renewLeases(request);
  upsertWorker = (worker: Parameters<Store["upsertWorker"]>[0]) => this.inner.upsertWorker(worker);
  removeWorker = (workerId: string) => this.inner.removeWorker(workerId);
  listWorkers = (since: number) => this.inner.listWorkers(since);
  createToken = (token: Parameters<Store["createToken"]>[0]) => this.inner.createToken(token);
  listTokens = () => this.inner.listTokens();
  getToken = (id: string) => this.inner.getToken(id);
  revokeToken = (id: string, now: number) => this.inner.revokeToken(id, now);
  appendAudit = (entry: Parameters<Store["appendAudit"]>[0]) => this.inner.appendAudit(entry);
  listAudit = (query: Parameters<Store["listAudit"]>[0]) => this.inner.listAudit(query);
  readBlobs = (hashes: readonly string[]) => this.inner.readBlobs(hashes);
  deleteUnreferencedBlobs = (before: number) => this.inner.deleteUnreferencedBlobs(before);

  // ── encoding ──

  /** True when `text` is too large to stay inline (UTF-16 length bounds the UTF-8 size: L ≤ bytes ≤ 3L). */
  private isLarge(text: string): boolean {
    return text.length * 3 > this.limit && (text.length > this.limit || byteLength(text) > this.limit);
  }

  private needsWork(text: string): boolean {
    return this.isLarge(text) || looksLikeMarker(text);
  }

  /** The stored form of a payload text; offloaded into `blobs` when large and `blobs` is given. */
  private async put(text: string, blobs: Blobs): Promise<string> {
    if (blobs && text !== "" && this.isLarge(text)) {
      const hash = sha256Hex(text);
      const size = byteLength(text);
      if (!blobs.some((blob) => blob.hash === hash)) blobs.push({ hash, size, body: this.codec ? await this.seal(text) : text });
      return blobRef(hash, size);
    }
    if (this.codec && text !== "") return this.seal(text);
    return looksLikeMarker(text) ? litMarker(text) : text;
  }

  private async seal(text: string): Promise<string> {
    return encMarker(await this.codec!.encode(Buffer.from(text, "utf8")));
  }

  private async putRun(run: NewRun): Promise<NewRun> {
    const blobs: PayloadBlob[] = [...(run.blobs ?? [])];
    const input = await this.put(run.input, blobs);
    if (input === run.input) return run;
    return blobs.length > 0 ? { ...run, input, blobs } : { ...run, input };
  }

  /** An entry's stored form: its payload, and the data fields stores project into other rows. */
  private async putEntry(entry: NewEntry, blobs: Blobs): Promise<NewEntry> {
    if (PLAIN_ENTRY_KINDS.has(entry.kind)) return entry;
    const large = this.isLarge(entry.payload);
    let payload = await this.put(entry.payload, blobs);
    // A checkpoint stored as a marker still says what it supersedes, or resumes would read all of history.
    if (payload !== entry.payload && isCheckpoint(entry.kind)) payload = withSupersedes(payload, entry.data as { from: unknown; keep: unknown });
    let data = entry.data;
    if (entry.kind === "agent.messages" && this.codec) data = (await this.sealAgentRows(data as EntryData["agent.messages"])) as typeof data;
    const projected = PROJECTED[entry.kind];
    if (projected && (this.codec || large)) {
      const value = (data as Record<string, unknown>)[projected.field];
      const text = value === undefined ? "" : encode(value);
      const stored = text === "" ? text : await this.put(text, projected.offload ? blobs : null);
      // Stores write `encode(data[field])`; a marker object encodes to the marker itself.
      if (stored !== text) data = { ...data, [projected.field]: new StoredText(stored) } as typeof data;
    }
    return payload === entry.payload && data === entry.data ? entry : { ...entry, payload, data };
  }

  /**
   * The rows an `agent.messages` entry projects, sealed with the codec like every payload (a store
   * writes `encode(value)`, and a marker object encodes to the marker itself).
   */
  private async sealAgentRows(entryData: EntryData["agent.messages"]): Promise<EntryData["agent.messages"]> {
    // The tool call values a record leaves out are read from the message blocks before those are sealed.
    const data = withToolCallValues(entryData);
    const seal = async (value: unknown) => new StoredText(await this.seal(encode(value)));
    const messages = await Promise.all(data.messages.map(async (m) => ({ ...m, content: await seal(m.content ?? null) })));
    const toolCalls =
      data.toolCalls &&
      (await Promise.all(
        data.toolCalls.map(async (c) => ({
          ...c,
          ...(c.args === undefined ? {} : { args: await seal(c.args) }),
          ...(c.result === undefined ? {} : { result: await seal(c.result) }),
        })),
      ));
    return toolCalls ? { messages, toolCalls } : { messages };
  }

  /** For a copied or imported `agent.messages` entry (its payload plain here): the data its rows are projected from. */
  private async agentRowData(entry: { kind: EntryKind; payload: string }): Promise<{ data?: unknown }> {
    if (entry.kind !== "agent.messages") return {};
    const data = decodeKeepingSecrets<EntryData["agent.messages"]>(entry.payload);
    return { data: this.codec && data && Array.isArray(data.messages) ? await this.sealAgentRows(data) : data };
  }

  /** Agent rows as stored, their sealed JSON opened. */
  readAgentMessages = async (runId: string, options?: Parameters<Store["readAgentMessages"]>[1]) => {
    const rows = await this.inner.readAgentMessages(runId, options);
    if (!this.codec) return rows;
    const texts = await this.resolve(rows.map((row) => ({ text: row.content, where: () => `Message ${row.seq} of agent run "${runId}"` })));
    return rows.map((row, i) => ({ ...row, content: texts[i]! }));
  };
  listToolCalls = async (runId: string) => {
    const rows = await this.inner.listToolCalls(runId);
    if (!this.codec) return rows;
    const open = async (text: string | null, what: string) => (text === null ? null : (await this.resolve([{ text, where: () => what }]))[0]!);
    return Promise.all(
      rows.map(async (row) => ({
        ...row,
        args: await open(row.args, `The arguments of tool call "${row.idempotencyKey}"`),
        result: await open(row.result, `The result of tool call "${row.idempotencyKey}"`),
      })),
    );
  };

  // ── decoding ──

  /** Resolves stored texts to payload texts, fetching every blob they reference in one read. */
  private async resolve(items: { text: string; where: () => string }[], previewBytes?: number): Promise<string[]> {
    // A preview does not load (or verify) a blob larger than it shows: it reads as an elided marker.
    const markers = items.map((item) => {
      const marker = parseMarker(item.text);
      return marker?.kind === "blob" && previewBytes !== undefined && marker.size > previewBytes ? { kind: "elided" as const, size: marker.size } : marker;
    });
    const hashes = [...new Set(markers.flatMap((m) => (m?.kind === "blob" ? [m.hash] : [])))];
    const bodies = new Map((await this.inner.readBlobs(hashes)).map((blob) => [blob.hash, blob]));
    return Promise.all(
      items.map(async (item, i) => {
        const marker = markers[i];
        if (!marker) return item.text;
        if (marker.kind === "elided") return elidedMarker(marker.size);
        if (marker.kind === "lit") return marker.text;
        if (marker.kind === "enc") return this.open(marker.data, item.where, null);
        const blob = bodies.get(marker.hash);
        if (!blob) throw new PayloadCorruptError(item.where(), marker.hash, "the blob it references does not exist");
        const text = mayBeMarker(blob.body) && parseMarker(blob.body)?.kind === "enc" ? await this.open(blob.body, item.where, marker.hash) : blob.body;
        if (Number(blob.size) !== marker.size || byteLength(text) !== marker.size || sha256Hex(text) !== marker.hash) {
          throw new PayloadCorruptError(item.where(), marker.hash, "its bytes do not match the SHA-256 and size the reference names");
        }
        return text;
      }),
    );
  }

  /** Decrypts an `enc` marker's data (or a whole `enc` marker text). */
  private async open(data: string, where: () => string, hash: string | null): Promise<string> {
    const base64 = data.startsWith("{") ? (parseMarker(data) as { data: string }).data : data;
    const bytes = Buffer.from(base64, "base64");
    if (!this.codec) throw new PayloadKeyMissingError(peekKeyId(bytes) ?? "(unknown)", `${where()} (no payload codec is configured)`);
    let plain: Uint8Array;
    try {
      plain = await this.codec.decode(bytes);
    } catch (error) {
      if (isCairnError(error, "PAYLOAD_KEY_MISSING")) throw new PayloadKeyMissingError((error as PayloadKeyMissingError).keyId ?? "(unknown)", where());
      throw new PayloadCorruptError(where(), hash, `it does not decrypt (${(error as Error).message})`);
    }
    return Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength).toString("utf8");
  }

  private async resolveEntries(entries: JournalEntry[], previewBytes?: number): Promise<JournalEntry[]> {
    if (!entries.some((entry) => mayBeMarker(entry.payload) || (entry.kind === "run.created" && entry.payload.includes(NESTED_INPUT)))) return entries;
    const texts = await this.resolve(
      entries.map((e) => ({ text: e.payload, where: () => `run "${e.runId}" journal seq ${e.seq}` })),
      previewBytes,
    );
    return Promise.all(
      entries.map(async (entry, i) => {
        let payload = texts[i]!;
        // Stores write `run.created` with the run's input as stored: a marker, when it was offloaded or encrypted.
        if (entry.kind === "run.created" && payload.includes(NESTED_INPUT)) payload = await this.resolveCreated(entry, payload, previewBytes);
        return payload === entry.payload ? entry : { ...entry, payload };
      }),
    );
  }

  private async resolveCreated(entry: JournalEntry, payload: string, previewBytes?: number): Promise<string> {
    // Parsed as plain JSON, not decoded: the input is spliced in as stored text, so a user value that
    // decodes to something marker-shaped (it is escaped in the stored text) is never taken for a marker.
    const data = JSON.parse(payload) as Record<string, unknown>;
    const stored = JSON.stringify(data.input);
    if (stored === undefined || !parseMarker(stored)) return payload;
    const [input] = await this.resolve([{ text: stored, where: () => `run "${entry.runId}" input (journal seq ${entry.seq})` }], previewBytes);
    // A preview of an entry whose input is too large to load: the whole entry is elided.
    if (input !== undefined && elidedSize(input, Infinity) !== undefined) return input;
    return JSON.stringify({ ...data, input: input === "" || input === undefined ? { $cairn: "undef" } : JSON.parse(input) });
  }

  private async resolveRun(run: RunRecord): Promise<RunRecord> {
    return (await this.resolveRuns([run]))[0]!;
  }

  private async resolveRuns(runs: RunRecord[], previewBytes?: number): Promise<RunRecord[]> {
    if (!runs.some((run) => mayBeMarker(run.input) || mayBeMarker(run.output) || mayBeMarker(run.error))) return runs;
    const fields = ["input", "output", "error"] as const;
    const items = runs.flatMap((run) => fields.map((field) => ({ text: run[field] ?? "", where: () => `run "${run.runId}" ${field}` })));
    const texts = await this.resolve(items, previewBytes);
    return runs.map((run, r) => {
      const [input, output, error] = [0, 1, 2].map((f) => texts[r * 3 + f]!);
      return { ...run, input: input!, output: run.output === null ? null : output!, error: run.error === null ? null : error! };
    });
  }

  private async resolveInbox(events: InboxEvent[]): Promise<InboxEvent[]> {
    if (!events.some((event) => mayBeMarker(event.payload))) return events;
    const texts = await this.resolve(events.map((e) => ({ text: e.payload, where: () => `run "${e.runId}" inbox event "${e.eventId}"` })));
    return events.map((event, i) => ({ ...event, payload: texts[i]! }));
  }

  private async resolveOutbox(messages: OutboxMessage[]): Promise<OutboxMessage[]> {
    if (!messages.some((message) => mayBeMarker(message.payload))) return messages;
    const texts = await this.resolve(messages.map((m) => ({ text: m.payload, where: () => `outbox message "${m.messageId}"` })));
    return messages.map((message, i) => ({ ...message, payload: texts[i]! }));
  }

  private async resolveHumans(requests: HumanRequest[]): Promise<HumanRequest[]> {
    if (!requests.some((r) => mayBeMarker(r.answer) || mayBeMarker(r.context))) return requests;
    const items = requests.flatMap((r) => [
      { text: r.answer ?? "", where: () => `human request "${r.requestId}" answer` },
      { text: r.context ?? "", where: () => `human request "${r.requestId}" context` },
    ]);
    const texts = await this.resolve(items);
    return requests.map((request, i) => {
      const out: HumanRequest = { ...request, answer: request.answer === null ? null : texts[i * 2]! };
      if (request.context !== undefined) out.context = texts[i * 2 + 1]!;
      return out;
    });
  }
}
