import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// eslint-disable-next-line no-restricted-imports -- the MCP SDK's server (a test fixture), not Cairn's server layer
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { onCleanup, STORE_KINDS, testEngine } from "../../test/support/engines.js";
import { isCairnError } from "../core/errors.js";
import { waitFor } from "../testing/wait-for.js";
import { defineAgent, type AgentResult } from "./agent.js";
import { MCP_IDEMPOTENCY_KEY_META, McpToolError, mcpEffect, mcpResultText, toolsFromMcp, type McpClientLike, type McpToolInfo } from "./mcp.js";
import type { ModelRequest } from "./model/model.js";
import { ScriptedModel } from "./model/scripted.js";
import type { Tool, ToolContext } from "./tool.js";

const fast = { pollInterval: 10 };

const call = (id: string, name: string, input: unknown) => ({ type: "tool_use" as const, id, name, input: input as never });

function lastResults(request: ModelRequest) {
  const last = request.messages.at(-1);
  return last?.role === "tool" ? last.content : [];
}

/** What the server saw: tool, arguments and the idempotency key from `_meta`. */
interface ServerCall {
  tool: string;
  args: unknown;
  key: unknown;
}

/** A real MCP server from the SDK, connected in-process to a real SDK client. */
async function connectedServer() {
  const calls: ServerCall[] = [];
  const server = new McpServer({ name: "test-server", version: "1.0.0" });
  const record = (tool: string, args: unknown, extra: { _meta?: Record<string, unknown> }) =>
    calls.push({ tool, args, key: extra._meta?.[MCP_IDEMPOTENCY_KEY_META] });
  server.registerTool(
    "search_docs",
    {
      description: "Searches the docs.",
      inputSchema: { query: z.string().min(1), limit: z.number().int().positive().optional() },
      annotations: { readOnlyHint: true },
    },
    (args, extra) => {
      record("search_docs", args, extra);
      return { content: [{ type: "text", text: `found ${args.limit ?? 3} pages about ${args.query}` }] };
    },
  );
  server.registerTool(
    "set_flag",
    {
      description: "Turns a feature flag on or off.",
      inputSchema: { flag: z.string(), on: z.boolean() },
      annotations: { idempotentHint: true, destructiveHint: false },
    },
    (args, extra) => {
      record("set_flag", args, extra);
      return { content: [{ type: "text", text: `${args.flag}=${args.on}` }] };
    },
  );
  server.registerTool(
    "delete_file",
    { description: "Deletes a file.", inputSchema: { path: z.string() }, annotations: { destructiveHint: true, idempotentHint: true } },
    (args, extra) => {
      record("delete_file", args, extra);
      return { content: [{ type: "text", text: `deleted ${args.path}` }] };
    },
  );
  server.registerTool("create.note", { description: "Creates a note.", inputSchema: { title: z.string(), body: z.string() } }, (args, extra) => {
    record("create.note", args, extra);
    return { content: [{ type: "text", text: `note "${args.title}" created` }] };
  });
  server.registerTool(
    "append_log",
    { description: "Appends a line to the log.", inputSchema: { line: z.string() }, annotations: { destructiveHint: false, idempotentHint: false } },
    (args, extra) => {
      record("append_log", args, extra);
      return { content: [{ type: "text", text: "appended" }] };
    },
  );
  server.registerTool("fail", { description: "Always fails.", inputSchema: {}, annotations: { readOnlyHint: true } }, (args, extra) => {
    record("fail", args, extra);
    return { content: [{ type: "text", text: "the disk is full" }], isError: true };
  });
  server.registerTool("snapshot", { description: "Takes a screenshot.", annotations: { readOnlyHint: true } }, () => ({
    content: [
      { type: "text", text: "here it is" },
      { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
      { type: "resource", resource: { uri: "file:///notes.txt", text: "notes body" } },
    ],
  }));
  const client = new Client({ name: "cairn-test", version: "1.0.0" });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await Promise.all([client.connect(clientTransport), server.connect(serverTransport)]);
  onCleanup(async () => {
    await client.close();
    await server.close();
  });
  return { client, server, calls };
}

/** A ToolContext for calling a tool's `run` directly. */
function context(idempotencyKey: string): ToolContext {
  return { idempotencyKey, toolCallId: "t1", runId: "r", attempt: 1, signal: new AbortController().signal, heartbeat: () => undefined };
}

/** A fake client over a fixed tool list (pages of it), for shapes the SDK's server will not produce. */
function fakeClient(pages: McpToolInfo[][]): McpClientLike & { listed: unknown[] } {
  const listed: unknown[] = [];
  return {
    listed,
    listTools: (params) => {
      listed.push(params);
      const index = params?.cursor === undefined ? 0 : Number(params.cursor);
      return Promise.resolve({ tools: pages[index]!, ...(index + 1 < pages.length ? { nextCursor: String(index + 1) } : {}) });
    },
    callTool: () => Promise.resolve({ content: [{ type: "text", text: "ok" }] }),
  };
}

const byName = (tools: Tool[]) => Object.fromEntries(tools.map((tool) => [tool.name, tool]));

describe("toolsFromMcp", () => {
  it("maps the server's hints to effects, sanitizing names and keeping the server's JSON Schema", async () => {
    const { client } = await connectedServer();
    // The SDK's Client fits the structural type without a cast.
    const typed: McpClientLike = client;
    const tools = byName(await toolsFromMcp(typed));
    expect(Object.keys(tools)).toEqual(["search_docs", "set_flag", "delete_file", "create_note", "append_log", "fail", "snapshot"]);
    expect(Object.fromEntries(Object.values(tools).map((tool) => [tool.name, tool.effect]))).toEqual({
      search_docs: "none",
      set_flag: "idempotent",
      delete_file: "unsafe", // destructive wins over idempotent
      create_note: "unsafe", // no annotations: MCP's defaults are destructive, not idempotent
      append_log: "unsafe", // additive but not idempotent: a rerun would append twice
      fail: "none",
      snapshot: "none",
    });
    const listed = (await client.listTools()).tools.find((tool) => tool.name === "search_docs")!;
    const { $schema: _ignored, ...serverSchema } = listed.inputSchema;
    expect(tools.search_docs!.spec).toEqual({ name: "search_docs", description: "Searches the docs.", inputSchema: serverSchema });
    expect(tools.search_docs!.spec.inputSchema).toMatchObject({ type: "object", required: ["query"] });
    expect(Object.values(tools).every((tool) => tool.approvalPolicy === null)).toBe(true);
  });

  it("validates the model's arguments against the converted schema", async () => {
    const { client } = await connectedServer();
    const { search_docs, set_flag, fail } = byName(await toolsFromMcp(client));
    expect(search_docs!.input.safeParse({ query: "leases", limit: 2 })).toEqual({ success: true, data: { query: "leases", limit: 2 } });
    expect(search_docs!.input.safeParse({ query: "" }).success).toBe(false);
    expect(search_docs!.input.safeParse({ limit: 2 }).error?.issues[0]?.path).toEqual(["query"]);
    expect(search_docs!.input.safeParse({ query: "x", limit: 1.5 }).success).toBe(false);
    expect(set_flag!.input.safeParse({ flag: "beta", on: "yes" }).success).toBe(false);
    expect(set_flag!.input.safeParse(["beta", true]).success).toBe(false);
    expect(fail!.input.safeParse({}).success).toBe(true);
  });

  it("falls back to checking required properties when zod cannot convert a schema", async () => {
    const client = fakeClient([
      [{ name: "odd", inputSchema: { type: "object", properties: { a: { type: "string" } }, required: ["a"], if: { required: ["a"] }, then: {} } }],
    ]);
    const [odd] = await toolsFromMcp(client);
    expect(odd!.input.safeParse({ a: "x", b: 1 })).toEqual({ success: true, data: { a: "x", b: 1 } });
    expect(odd!.input.safeParse({ b: 1 }).error?.issues[0]?.path).toEqual(["a"]);
    expect(odd!.input.safeParse("x").success).toBe(false);
    expect(odd!.spec.inputSchema).toMatchObject({ if: { required: ["a"] } });
    expect(odd!.description).toBe("The odd tool of an MCP server.");
  });

  it("applies prefix, filter, effect overrides and approval options, and rejects collisions and unknown names", async () => {
    const { client } = await connectedServer();
    const tools = byName(
      await toolsFromMcp(client, {
        prefix: "docs_",
        filter: (tool) => tool.name !== "snapshot",
        effects: { "create.note": "idempotent", search_docs: "unsafe" },
        approval: "destructive",
      }),
    );
    expect(Object.keys(tools)).toEqual(["docs_search_docs", "docs_set_flag", "docs_delete_file", "docs_create_note", "docs_append_log", "docs_fail"]);
    expect(tools.docs_create_note!.effect).toBe("idempotent");
    expect(tools.docs_search_docs!.effect).toBe("unsafe");
    const needsApproval = Object.values(tools)
      .filter((tool) => tool.approvalPolicy !== null)
      .map((tool) => tool.name);
    expect(needsApproval).toEqual(["docs_delete_file", "docs_create_note"]);

    const all = await toolsFromMcp(client, { approval: "all" });
    expect(all.every((tool) => tool.approvalPolicy !== null)).toBe(true);
    const custom = byName(await toolsFromMcp(client, { approval: (tool, effect) => (effect === "unsafe" ? { timeout: "1h" } : tool.name === "fail") }));
    expect(custom.append_log!.approvalPolicy).toEqual({ timeout: "1h" });
    expect(custom.fail!.approvalPolicy).toEqual({});
    expect(custom.search_docs!.approvalPolicy).toBeNull();

    const long = "t".repeat(70);
    expect((await toolsFromMcp(fakeClient([[{ name: long, inputSchema: { type: "object" } }]])))[0]!.name).toBe("t".repeat(64));
    const clash = fakeClient([[{ name: "a.b", inputSchema: { type: "object" } }], [{ name: "a b", inputSchema: { type: "object" } }]]);
    await expect(toolsFromMcp(clash)).rejects.toThrow(/"a\.b" and "a b" would both be named "a_b"/);
    expect(clash.listed).toEqual([undefined, { cursor: "1" }]); // every page is listed
    await expect(toolsFromMcp(client, { effects: { nope: "none" } })).rejects.toThrow(/no tool named "nope"/);
    await expect(toolsFromMcp(client, { prefix: "bad prefix" })).rejects.toThrow(/prefix/);
  });

  it("calls the server with the idempotency key in _meta, joins the text and fails on isError without retrying", async () => {
    const { client, calls } = await connectedServer();
    const { set_flag, fail, snapshot } = byName(await toolsFromMcp(client));
    await expect(set_flag!.run({ flag: "beta", on: true }, context("r:tool:t1"))).resolves.toBe("beta=true");
    expect(calls).toEqual([{ tool: "set_flag", args: { flag: "beta", on: true }, key: "r:tool:t1" }]);
    await expect(snapshot!.run({}, context("k"))).resolves.toBe("here it is\n[image (image/png)]\nnotes body");
    const failure = await fail!.run({}, context("k")).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpToolError);
    expect(failure).toMatchObject({ message: "the disk is full", nonRetryable: true, tool: "fail" });
  });

  it("maps hints and results as documented", () => {
    expect(mcpEffect(undefined)).toBe("unsafe");
    expect(mcpEffect({})).toBe("unsafe");
    expect(mcpEffect({ readOnlyHint: true, destructiveHint: true })).toBe("none");
    expect(mcpEffect({ idempotentHint: true })).toBe("unsafe");
    expect(mcpEffect({ idempotentHint: true, destructiveHint: false })).toBe("idempotent");
    expect(mcpResultText({ content: [], structuredContent: { n: 1 } })).toBe('{"n":1}');
    expect(mcpResultText({ toolResult: { legacy: true } })).toBe('{"legacy":true}');
    expect(mcpResultText({ content: [{ type: "resource_link", uri: "file:///a", mimeType: "text/plain" }] })).toBe("[resource link file:///a (text/plain)]");
  });
});

describe.each(STORE_KINDS)("an agent with MCP tools on %s", (kind) => {
  it("calls MCP tools end to end: the key reaches the server, errors and bad arguments reach the model", async () => {
    const { client, calls } = await connectedServer();
    const tools = await toolsFromMcp(client, { prefix: "srv_" });
    const model = new ScriptedModel([
      {
        content: [
          call("c1", "srv_create_note", { title: "plan", body: "ship it" }),
          call("c2", "srv_search_docs", { query: "" }),
          call("c3", "srv_fail", {}),
          call("c4", "srv_set_flag", { flag: "beta", on: false }),
        ],
      },
      (request) => ({
        content: lastResults(request)
          .map((r) => `${r.toolUseId}=${r.isError ? "error" : "ok"}:${r.content}`)
          .join("\n"),
      }),
    ]);
    const agent = defineAgent({ name: "mcp-user", model, tools });
    const engine = await testEngine(kind, { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "take notes" }, { runId: "m" });
    const lines = ((await engine.result("m", { timeoutMs: 5000 })) as AgentResult).text.split("\n");
    expect(lines[0]).toBe('c1=ok:note "plan" created');
    expect(lines[1]).toMatch(/^c2=error:Invalid arguments for srv_search_docs: query:/);
    expect(lines[2]).toMatch(/^c3=error:srv_fail failed: .*McpToolError: the disk is full/);
    expect(lines[3]).toBe("c4=ok:beta=false");
    // Bad arguments never reached the server; the error result was not retried.
    expect(calls.sort((a, b) => a.tool.localeCompare(b.tool))).toEqual([
      { tool: "create.note", args: { title: "plan", body: "ship it" }, key: "m:tool:0:c1" },
      { tool: "fail", args: {}, key: "m:tool:0:c3" },
      { tool: "set_flag", args: { flag: "beta", on: false }, key: "m:tool:0:c4" },
    ]);
    const intents = (await engine.journal("m")).filter((e) => e.kind === "step.started" && e.opKey?.includes("/tool-")).map((e) => e.data);
    expect(intents).toHaveLength(3);
  });
});

describe("an agent with MCP tools needing approval", () => {
  it("asks before a destructive MCP call and sends it only once approved", async () => {
    const { client, calls } = await connectedServer();
    const tools = await toolsFromMcp(client, { approval: "destructive", filter: (tool) => tool.name === "delete_file" });
    const model = new ScriptedModel([
      { content: [call("d1", "delete_file", { path: "/tmp/x" })] },
      (request) => ({ content: lastResults(request)[0]!.content }),
    ]);
    const agent = defineAgent({ name: "mcp-approver", model, tools });
    const engine = await testEngine("memory", { workflows: [agent] });
    engine.startWorker(fast);
    await engine.start(agent, { prompt: "clean up" }, { runId: "p" });
    await waitFor(async () => (await engine.listHumanRequests({ status: "pending", runId: "p" })).length === 1, { what: "approval pending" });
    expect(calls).toEqual([]);
    const [request] = await engine.listHumanRequests({ status: "pending", runId: "p" });
    await engine.respondToHuman(request!.requestId, { action: "answer", option: "approve", by: "ada" });
    expect(((await engine.result("p", { timeoutMs: 5000 })) as AgentResult).text).toBe("deleted /tmp/x");
    expect(calls).toEqual([{ tool: "delete_file", args: { path: "/tmp/x" }, key: "p:tool:0:d1" }]);
  });

  it("rejects a client without listTools/callTool", async () => {
    const error = await toolsFromMcp({} as McpClientLike).catch((failure: unknown) => failure);
    expect(isCairnError(error, "INVALID_INPUT")).toBe(true);
  });
});
