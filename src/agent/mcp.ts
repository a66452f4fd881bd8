/**
 * Tools loaded from an MCP server's tool list. The client is typed structurally (the shape of the
 * official `@modelcontextprotocol/sdk` `Client`), so `cairn/agent` neither imports the SDK at
 * runtime nor names its types in its declarations.
 */
import { z } from "zod";
import { toMs, type Duration } from "../core/duration.js";
import { NonRetryableError, ValidationError } from "../core/errors.js";
import type { RetryPolicy } from "../engine/workflow.js";
import type { JsonValue } from "./model/schemas.js";
import { defineTool, type ApprovalPolicy, type Tool, type ToolDefinition } from "./tool.js";

/** The `_meta` key under which every call carries its Cairn idempotency key (`<runId>:tool:<turn>:<toolCallId>`). */
export const MCP_IDEMPOTENCY_KEY_META = "cairn/idempotencyKey";

/** MCP's behaviour hints for a tool (all optional; the spec's defaults apply when absent). */
export interface McpToolAnnotations {
  title?: string;
  /** The tool does not modify its environment. Default false. */
  readOnlyHint?: boolean;
  /** When not read-only: it may destroy or overwrite rather than only add. Default true. */
  destructiveHint?: boolean;
  /** When not read-only: calling it again with the same arguments has no further effect. Default false. */
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One entry of an MCP server's `tools/list` result. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  /** A JSON Schema object for the tool's arguments. */
  inputSchema: { type: "object"; [key: string]: unknown };
  annotations?: McpToolAnnotations;
}

/** One content part of a tool result (text, image, audio, resource, resource_link…). */
export interface McpContentPart {
  type: string;
  text?: string;
  mimeType?: string;
  uri?: string;
  resource?: { uri: string; text?: string; blob?: string; mimeType?: string };
}

/** A `tools/call` result: content parts (or a pre-2024-11 `toolResult`), optionally flagged as an error. */
export interface McpCallToolResult {
  content?: McpContentPart[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  toolResult?: unknown;
}

/** Per-request options the SDK's `Client` takes (a subset of its `RequestOptions`). */
export interface McpRequestOptions {
  signal?: AbortSignal;
  /** Milliseconds before the SDK gives up on the request (its default is 60 s). */
  timeout?: number;
  /** Called on each progress notification; asking for it makes the client send a progress token. */
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
  resetTimeoutOnProgress?: boolean;
}

/**
 * The part of an MCP client {@link toolsFromMcp} uses. A connected `Client` from
 * `@modelcontextprotocol/sdk/client/index.js` fits; so does a fake in tests.
 */
export interface McpClientLike {
  listTools(params?: { cursor?: string }, options?: McpRequestOptions): Promise<{ tools: McpToolInfo[]; nextCursor?: string }>;
  callTool(
    params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
    resultSchema?: undefined,
    options?: McpRequestOptions,
  ): Promise<McpCallToolResult>;
}

/** The effects an MCP tool can be given: `reversible` needs a compensation, which MCP cannot describe. */
export type McpToolEffect = "none" | "idempotent" | "unsafe";

/** What {@link toolsFromMcp} takes besides the client. */
export interface McpToolsOptions {
  /** Prepended to every tool name, e.g. `"github_"` (tools of two servers then cannot collide). */
  prefix?: string;
  /** Which of the server's tools to load; default all. */
  filter?: (tool: McpToolInfo) => boolean;
  /** Effect overrides by the server's tool name; they win over the hints (see {@link mcpEffect}). */
  effects?: Record<string, McpToolEffect>;
  /**
   * Which calls wait for a person's approval: `"all"`, `"destructive"` (tools not read-only whose
   * `destructiveHint` is not `false`: MCP's own notion), or a function returning `true`, a policy,
   * or `false`. Default: none.
   */
  approval?: "all" | "destructive" | ((tool: McpToolInfo, effect: McpToolEffect) => boolean | ApprovalPolicy<Record<string, unknown>>);
  /** Retry policy of each call's step (default: the tool default, 3 attempts). An `isError` result is never retried. */
  retry?: RetryPolicy;
  /** Per-attempt timeout, also passed to the SDK as its request timeout (else the SDK's 60 s applies). */
  timeout?: Duration;
}

/**
 * The effect an MCP tool's annotations imply, on the safe side of MCP's defaults:
 * `readOnlyHint` → `none`; `idempotentHint` with `destructiveHint: false` → `idempotent`;
 * anything else (no annotations, `destructiveHint` true or absent, which MCP defaults to true,
 * or an additive tool that is not idempotent) → `unsafe`, so a call whose outcome a crash hid is
 * asked about, never blindly repeated. Hints come from the server and are only hints: override
 * them with `effects` for servers you do not trust.
 */
export function mcpEffect(annotations: McpToolAnnotations | undefined): McpToolEffect {
  if (annotations?.readOnlyHint === true) return "none";
  if (annotations?.idempotentHint === true && annotations.destructiveHint === false) return "idempotent";
  return "unsafe";
}

/** A tool result the MCP server flagged with `isError`: the model is told, the call is not retried. */
export class McpToolError extends NonRetryableError {
  constructor(
    readonly tool: string,
    message: string,
  ) {
    super(message);
    this.name = "McpToolError";
  }
}

const INVALID_NAME_CHARS = /[^a-zA-Z0-9_-]/g;
/** JSON-RPC errors that a retry cannot fix: invalid request, method not found, invalid params. */
const DETERMINISTIC_RPC_CODES = new Set([-32600, -32601, -32602]);

/**
 * Lists an MCP server's tools (every page) and returns them as Cairn {@link Tool}s, ready for
 * `defineAgent({ tools })`. Each tool's `spec.inputSchema` is the server's JSON Schema; the model's
 * arguments are validated against it (converted with zod's `z.fromJSONSchema`) before the call, and
 * invalid ones go back to the model. `effect` follows the server's hints ({@link mcpEffect}). A
 * call is `client.callTool` with the arguments and `_meta["cairn/idempotencyKey"]`, which stays the
 * same across retries and crashes, so a server can deduplicate. The output is the result's text
 * (non-text parts as short placeholders); an `isError` result fails the call and the model sees its text.
 *
 * Names are sanitized to letters, digits, `_` and `-` (other characters become `_`), prefixed,
 * and cut to 64 characters; two tools that end up with one name are an error.
 * @throws ValidationError for a name collision, an `effects` key naming no tool, or an invalid option.
 * @example
 * import { Client } from "@modelcontextprotocol/sdk/client/index.js";
 * import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
 * const client = new Client({ name: "my-agent", version: "1.0.0" });
 * await client.connect(new StdioClientTransport({ command: "my-mcp-server" }));
 * const tools = await toolsFromMcp(client, { prefix: "fs_", approval: "destructive" });
 * const agent = defineAgent({ name: "files", model, tools });
 */
export async function toolsFromMcp(client: McpClientLike, options: McpToolsOptions = {}): Promise<Tool<Record<string, unknown>, string>[]> {
  if (!client || typeof client.listTools !== "function" || typeof client.callTool !== "function") {
    throw new ValidationError("toolsFromMcp needs an MCP client with listTools() and callTool().");
  }
  const prefix = options.prefix ?? "";
  if (prefix !== "" && !/^[a-zA-Z0-9_-]{1,63}$/.test(prefix))
    throw new ValidationError(`MCP tool prefix ${JSON.stringify(prefix)} may use letters, digits, _ and - only.`);
  const listed = await listAll(client);
  const known = new Set(listed.map((tool) => tool.name));
  for (const name of Object.keys(options.effects ?? {})) {
    if (!known.has(name)) throw new ValidationError(`toolsFromMcp effects: the server has no tool named "${name}".`);
  }
  const byName = new Map<string, string>();
  const tools: Tool<Record<string, unknown>, string>[] = [];
  for (const info of listed) {
    if (options.filter && !options.filter(info)) continue;
    const name = (prefix + info.name.replace(INVALID_NAME_CHARS, "_")).slice(0, 64) || "_";
    const clash = byName.get(name);
    if (clash !== undefined) throw new ValidationError(`MCP tools "${clash}" and "${info.name}" would both be named "${name}"; filter one out.`);
    byName.set(name, info.name);
    tools.push(toTool(client, info, name, options));
  }
  return tools;
}

async function listAll(client: McpClientLike): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? undefined : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
    if (cursor !== undefined && seen.has(cursor)) throw new ValidationError(`The MCP server's tool list repeats the cursor ${JSON.stringify(cursor)}.`);
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor !== undefined);
  return tools;
}

function toTool(client: McpClientLike, info: McpToolInfo, name: string, options: McpToolsOptions): Tool<Record<string, unknown>, string> {
  const effect = options.effects?.[info.name] ?? mcpEffect(info.annotations);
  const inputSchema = plainJsonSchema(info);
  const timeoutMs = options.timeout === undefined ? undefined : toMs(options.timeout);
  const definition: ToolDefinition<Record<string, unknown>, string> = {
    name,
    description: info.description?.trim() || info.title || info.annotations?.title || `The ${info.name} tool of an MCP server.`,
    input: argumentsSchema(inputSchema),
    effect,
    async run(args, { idempotencyKey, signal, heartbeat }) {
      let result: McpCallToolResult;
      try {
        result = await client.callTool({ name: info.name, arguments: args, _meta: { [MCP_IDEMPOTENCY_KEY_META]: idempotencyKey } }, undefined, {
          signal,
          // A server that reports progress keeps the run's lease alive through a long call.
          onprogress: () => heartbeat(),
          ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }),
        });
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        if (typeof code === "number" && DETERMINISTIC_RPC_CODES.has(code)) throw new NonRetryableError((error as Error).message, { cause: error });
        throw error;
      }
      const text = mcpResultText(result);
      if (result.isError === true) throw new McpToolError(info.name, text || `${info.name} reported an error.`);
      return text;
    },
  };
  const approval = approvalFor(info, effect, options.approval);
  if (approval !== undefined) definition.approval = approval;
  if (options.retry !== undefined) definition.retry = options.retry;
  if (options.timeout !== undefined) definition.timeout = options.timeout;
  const tool = defineTool(definition);
  // The model is shown the server's own schema, not a round trip of it through zod.
  return Object.freeze({ ...tool, spec: { ...tool.spec, inputSchema } });
}

/** The server's schema as plain JSON, without `$schema` (as `defineTool` does; some providers reject it). */
function plainJsonSchema(info: McpToolInfo): Record<string, JsonValue> {
  const schema = info.inputSchema && typeof info.inputSchema === "object" ? (JSON.parse(JSON.stringify(info.inputSchema)) as Record<string, JsonValue>) : {};
  delete schema.$schema;
  if (schema.type === undefined) schema.type = "object";
  return schema;
}

/**
 * The zod schema the model's arguments are parsed with. zod's converter covers most of JSON Schema;
 * for what it rejects (if/then/else, `not`, external `$ref`…) the check falls back to "an object
 * with the required properties" and leaves the rest to the server, which validates its own input
 * and answers with an `isError` result the model sees.
 */
function argumentsSchema(schema: Record<string, JsonValue>): z.ZodType<Record<string, unknown>> {
  try {
    const converted = z.fromJSONSchema(schema as z.core.JSONSchema.JSONSchema) as z.ZodType<Record<string, unknown>, Record<string, unknown>>;
    // The arguments must still be an object even if the schema forgot to say so.
    return z.record(z.string(), z.unknown()).pipe(converted);
  } catch {
    const required = Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === "string") : [];
    return z.record(z.string(), z.unknown()).superRefine((args, ctx) => {
      for (const key of required) if (!(key in args)) ctx.addIssue({ code: "custom", path: [key], message: "Required" });
    });
  }
}

function approvalFor(
  info: McpToolInfo,
  effect: McpToolEffect,
  option: McpToolsOptions["approval"],
): boolean | ApprovalPolicy<Record<string, unknown>> | undefined {
  if (option === undefined) return undefined;
  if (option === "all") return true;
  if (option === "destructive") return info.annotations?.readOnlyHint !== true && info.annotations?.destructiveHint !== false;
  if (typeof option === "function") return option(info, effect);
  throw new ValidationError(`toolsFromMcp approval must be "all", "destructive" or a function, not ${JSON.stringify(option)}.`);
}

/**
 * The text the model sees for an MCP tool result: text parts (and text resources) joined by
 * newlines, other parts as short placeholders such as `[image (image/png)]` (their bytes are not
 * journaled), else the structured content as JSON, else a pre-2024-11 `toolResult`.
 */
export function mcpResultText(result: McpCallToolResult): string {
  if (Array.isArray(result.content) && result.content.length > 0) return result.content.map(partText).join("\n");
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  if (result.toolResult !== undefined) return typeof result.toolResult === "string" ? result.toolResult : (JSON.stringify(result.toolResult) ?? "");
  return "";
}

function partText(part: McpContentPart): string {
  switch (part.type) {
    case "text":
      return part.text ?? "";
    case "resource":
      return typeof part.resource?.text === "string" ? part.resource.text : `[resource ${part.resource?.uri ?? ""}${mime(part.resource?.mimeType)}]`;
    case "resource_link":
      return `[resource link ${part.uri ?? ""}${mime(part.mimeType)}]`;
    default:
      return `[${part.type}${mime(part.mimeType)}]`;
  }
}

const mime = (type: string | undefined) => (type ? ` (${type})` : "");
