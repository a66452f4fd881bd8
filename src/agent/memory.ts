import { z } from "zod";
import { ValidationError } from "../core/errors.js";
import type { WorkflowContext } from "../engine/workflow.js";
import type { ToolResult, ToolSpec, ToolUseBlock } from "./model/schemas.js";

/** Structured working memory an agent keeps outside its context window. */
export interface MemoryOptions {
  /** Allowed keys and the schema of each value; without it any key and any JSON value is accepted. */
  schema?: Record<string, z.ZodType>;
  /** Give the model the `search_history` tool: full-text search over this run's model and tool results. Default true. */
  search?: boolean;
}

/** The memory: key → value, JSON only. Kept in the loop state, so it is durable and replays exactly. */
export type Memory = Record<string, unknown>;

/** Names of the built-in memory tools. */
export const MEMORY_TOOLS = ["memory_set", "memory_get", "memory_list", "search_history"] as const;

const SetInput = z.object({ key: z.string().min(1).max(200), value: z.unknown() }).strict();
const GetInput = z.object({ key: z.string().min(1).max(200) }).strict();
const SearchInput = z.object({ query: z.string().min(1).max(1000) }).strict();

/** The specs the model is shown for the built-in memory tools. */
export function memoryToolSpecs(options: MemoryOptions): ToolSpec[] {
  const keys = options.schema ? Object.keys(options.schema) : null;
  const specs: ToolSpec[] = [
    {
      name: "memory_set",
      description: `Remembers a value under a key, outside the conversation (it survives summaries).${keys ? ` Keys: ${keys.join(", ")}.` : ""}`,
      inputSchema: { type: "object", properties: { key: { type: "string" }, value: {} }, required: ["key", "value"], additionalProperties: false },
    },
    {
      name: "memory_get",
      description: "Reads the value remembered under a key.",
      inputSchema: { type: "object", properties: { key: { type: "string" } }, required: ["key"], additionalProperties: false },
    },
    { name: "memory_list", description: "Lists the keys remembered so far.", inputSchema: { type: "object", properties: {}, additionalProperties: false } },
  ];
  if (options.search !== false) {
    specs.push({
      name: "search_history",
      description: "Searches everything this run has seen (model answers and tool results, including those summarized away): what did I learn about X?",
      inputSchema: { type: "object", properties: { query: { type: "string" } }, required: ["query"], additionalProperties: false },
    });
  }
  return specs;
}

/** Checks memory options once. */
export function resolveMemory(agent: string, options: MemoryOptions | undefined): MemoryOptions | null {
  if (!options) return null;
  for (const [key, schema] of Object.entries(options.schema ?? {})) {
    if (!(schema instanceof z.ZodType)) throw new ValidationError(`Agent "${agent}": memory.schema.${key} must be a zod schema.`);
  }
  return options;
}

/** A memory tool call's result, and the write it asks for (applied in call order after the turn). */
export interface MemoryCall {
  result: ToolResult;
  set?: { key: string; value: unknown };
}

/** Runs one built-in memory tool call against the memory as it was when the turn began. */
export async function runMemoryTool(ctx: WorkflowContext, options: MemoryOptions, memory: Memory, call: ToolUseBlock): Promise<MemoryCall> {
  const ok = (content: string): ToolResult => ({ type: "tool_result", toolUseId: call.id, content });
  const error = (content: string): ToolResult => ({ type: "tool_result", toolUseId: call.id, content, isError: true });
  switch (call.name) {
    case "memory_set": {
      const parsed = SetInput.safeParse(call.input);
      if (!parsed.success) return { result: error("memory_set takes { key, value }.") };
      const { key } = parsed.data;
      let value = parsed.data.value;
      const schema = options.schema?.[key];
      if (options.schema && !schema) return { result: error(`Unknown memory key "${key}". Keys: ${Object.keys(options.schema).join(", ")}.`) };
      if (schema) {
        const checked = schema.safeParse(value);
        if (!checked.success)
          return { result: error(`Invalid value for "${key}": ${checked.error.issues.map((i) => `${i.path.join(".") || "value"}: ${i.message}`).join("; ")}`) };
        value = checked.data;
      }
      return { result: ok(`Remembered "${key}".`), set: { key, value: JSON.parse(JSON.stringify(value ?? null)) as unknown } };
    }
    case "memory_get": {
      const parsed = GetInput.safeParse(call.input);
      if (!parsed.success) return { result: error("memory_get takes { key }.") };
      const { key } = parsed.data;
      return { result: key in memory ? ok(JSON.stringify(memory[key])) : error(`Nothing is remembered under "${key}".`) };
    }
    case "memory_list":
      return { result: ok(JSON.stringify(Object.keys(memory))) };
    default: {
      const parsed = SearchInput.safeParse(call.input);
      if (!parsed.success) return { result: error("search_history takes { query }.") };
      const suffix = call.id.replace(/[^a-zA-Z0-9_-]/g, "_");
      const hits = await ctx.searchJournal(parsed.data.query, { limit: 5, name: `search-${suffix}` });
      if (hits.length === 0) return { result: ok("Nothing found.") };
      return { result: ok(hits.map((hit) => `[${hit.opKey}] ${hit.text.slice(0, 1500)}`).join("\n\n")) };
    }
  }
}
