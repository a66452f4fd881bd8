/** A tool call a scripted reply makes. */
export interface ScriptedCall {
  id: string;
  name: string;
  /** A JSON value, or the exact argument text (which may be invalid JSON). */
  arguments: unknown;
}

/** One scripted answer, rendered in the format of the endpoint that was called (JSON or streamed). */
export interface ProviderReply {
  text?: string;
  thinking?: string;
  toolCalls?: ScriptedCall[];
  /** Provider-hosted tool items, as the provider returns them, placed before the text: Responses output items, Anthropic content blocks. */
  hosted?: { openai?: Record<string, unknown>[]; anthropic?: Record<string, unknown>[] };
  usage?: { input?: number; output?: number; cached?: number; reasoning?: number; cacheWrite?: number };
  stopReason?: "end" | "max_tokens";
  /** The model the response reports. Default: the request's. */
  model?: string;
  /** Wait before answering. */
  delayMs?: number;
  /** Wait between streamed events. */
  eventDelayMs?: number;
  /** A streamed answer pauses after `holdAfter` (default 3) events until this settles. */
  hold?: Promise<unknown>;
  holdAfter?: number;
}

/** An error answer: the provider's error body for `status`, with `message`. */
export interface ProviderErrorReply {
  status: number;
  message?: string;
  headers?: Record<string, string>;
  body?: unknown;
}

/** The connection is cut: `before` any response, or `mid` stream (a reply is rendered and half sent). */
export type ProviderDisconnect = { disconnect: "before" } | ({ disconnect: "mid" } & ProviderReply);

export type ProviderStep = ProviderReply | ProviderErrorReply | ProviderDisconnect;

/** A request the server received. */
export interface LedgerEntry {
  /** 1-based arrival number. */
  n: number;
  /** Arrival time, ms since the epoch (sub-millisecond precision). */
  at: number;
  method: string;
  path: string;
  format: "responses" | "chat" | "anthropic" | undefined;
  stream: boolean;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  /** How it was answered: `reply`, an HTTP status, `disconnect` or `exhausted`. */
  answer?: string | number;
}

export interface ProviderServerOptions {
  /** Answers requests once the queue is empty. */
  respond?: (request: LedgerEntry) => ProviderStep | Promise<ProviderStep>;
  model?: string;
}

export declare class ProviderServer {
  constructor(options?: ProviderServerOptions);
  readonly requests: LedgerEntry[];
  queue: (ProviderStep | ((request: LedgerEntry) => ProviderStep | Promise<ProviderStep>))[];
  respond: ProviderServerOptions["respond"];
  /** `http://127.0.0.1:<port>` once started. */
  url: string;
  start(): Promise<this>;
  enqueue(...steps: (ProviderStep | ((request: LedgerEntry) => ProviderStep | Promise<ProviderStep>))[]): this;
  waitForRequests(count: number, timeoutMs?: number): Promise<LedgerEntry[]>;
  close(): Promise<void>;
}

export declare function startProviderServer(options?: ProviderServerOptions): Promise<ProviderServer>;
