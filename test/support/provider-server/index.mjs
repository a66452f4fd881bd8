// A local HTTP server that speaks the wire formats of OpenAI (Responses, Chat Completions) and
// Anthropic (Messages), JSON and streaming, so the real SDKs can be pointed at it with `baseURL`.
// Each test scripts its answers (a queue, then an optional `respond` function) and reads the ledger
// of every request received. Plain JavaScript so the benchmarks (node, no TypeScript) use it too;
// types in index.d.mts.
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import { anthropicMessages, errorBody, openaiChat, openaiResponses } from "./formats.mjs";

/** Which wire format a request path speaks. */
function formatOf(path) {
  if (path.endsWith("/responses")) return "responses";
  if (path.endsWith("/chat/completions")) return "chat";
  if (path.endsWith("/messages")) return "anthropic";
  return undefined;
}

export class ProviderServer {
  /** Every request received, in order of arrival. */
  requests = [];
  /** Answers still to give, in order; when empty, `respond` answers (or a 500 says the script ran out). */
  queue = [];
  respond;
  #server;
  #sockets = new Set();
  #waiters = new Set();
  url = "";

  constructor(options = {}) {
    this.respond = options.respond;
    this.model = options.model;
  }

  /** Starts listening on 127.0.0.1 at a free port. */
  async start() {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.#server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.on("close", () => this.#sockets.delete(socket));
    });
    await new Promise((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${this.#server.address().port}`;
    return this;
  }

  /** Adds answers to the queue. */
  enqueue(...steps) {
    this.queue.push(...steps);
    return this;
  }

  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitForRequests(count, timeoutMs = 10_000) {
    if (this.requests.length >= count) return Promise.resolve(this.requests);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        reject(new Error(`waited ${timeoutMs} ms for ${count} request(s), got ${this.requests.length}`));
      }, timeoutMs);
      const check = () => {
        if (this.requests.length < count) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(this.requests);
      };
      this.#waiters.add(check);
    });
  }

  async close() {
    for (const socket of this.#sockets) socket.destroy();
    if (this.#server) await new Promise((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req, res) {
    const at = performance.timeOrigin + performance.now();
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const text = Buffer.concat(chunks).toString("utf8");
    let body;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const path = new URL(req.url, "http://x").pathname;
    const format = formatOf(path);
    const stream = body?.stream === true;
    const entry = { n: this.requests.length + 1, at, method: req.method, path, format, stream, headers: req.headers, body };
    this.requests.push(entry);
    for (const waiter of [...this.#waiters]) waiter();
    if (!format) return send(res, 404, { error: { message: `No such endpoint: ${path}`, type: "invalid_request_error" } });
    let step = this.queue.shift();
    if (step === undefined && this.respond) step = await this.respond(entry);
    if (typeof step === "function") step = await step(entry);
    entry.answer = step === undefined ? "exhausted" : "disconnect" in step ? "disconnect" : "status" in step ? step.status : "reply";
    if (step === undefined) return send(res, 500, errorBody(format, 500, `The test script has no answer for request ${entry.n}.`));
    if ("status" in step) {
      const headers = { ...step.headers };
      return send(res, step.status, step.body ?? errorBody(format, step.status, step.message ?? `status ${step.status}`), headers);
    }
    if ("disconnect" in step && step.disconnect === "before") return req.socket.destroy();
    const reply = "disconnect" in step ? { ...step, disconnect: undefined } : step;
    const model = reply.model ?? body?.model ?? this.model ?? "test-model";
    const rendered =
      format === "responses"
        ? openaiResponses(reply, entry.n, model)
        : format === "chat"
          ? openaiChat(reply, entry.n, model, body?.stream_options?.include_usage === true)
          : anthropicMessages(reply, entry.n, model);
    if (reply.delayMs) await sleep(reply.delayMs);
    if (!stream) return send(res, 200, rendered.json, { "request-id": `req_${entry.n}`, "x-request-id": `req_${entry.n}` });
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": `req_${entry.n}`, "x-request-id": `req_${entry.n}` });
    let sent = 0;
    for (const event of rendered.events) {
      const data = typeof event.data === "string" ? event.data : JSON.stringify(event.data);
      res.write(`${event.event ? `event: ${event.event}\n` : ""}data: ${data}\n\n`);
      sent++;
      // Held after the first few events (a test connects clients mid-generation), or cut off.
      if (sent === (reply.holdAfter ?? 3) && reply.hold) await reply.hold;
      if (step.disconnect === "mid" && sent === Math.floor(rendered.events.length / 2)) return req.socket.destroy();
      if (reply.eventDelayMs) await sleep(reply.eventDelayMs);
    }
    res.end();
  }
}

function send(res, status, json, headers = {}) {
  const text = JSON.stringify(json);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Starts a provider server. */
export async function startProviderServer(options) {
  return new ProviderServer(options).start();
}
