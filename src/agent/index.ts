/**
 * `cairn/agent`: durable agent loops. `defineAgent` makes a workflow whose every model call and tool
 * call is a journaled step; tools declare how their effects behave after a crash; approvals are
 * durable questions; budgets are folds of the journal; the prompt is kept within the window by
 * journaled summaries; tools can also be loaded from an MCP server's tool list (`toolsFromMcp`).
 * The model layer is provider-neutral: adapters for the Anthropic SDK, the OpenAI SDK (Responses
 * API) and any Vercel AI SDK language model, and a scripted model for tests.
 * @packageDocumentation
 */
export * from "./model/index.js";
export { agentTool, defineAgent, type AgentDefinition, type AgentInput, type AgentResult, type AgentTool } from "./agent.js";
export { defineTool, argumentsHash, canonicalJson, type Tool, type ToolDefinition, type ToolContext, type ApprovalPolicy } from "./tool.js";
export { BudgetExceededError, usdToMicros, type AgentBudget, type AgentTotals } from "./budget.js";
export {
  toolsFromMcp,
  mcpEffect,
  mcpResultText,
  McpToolError,
  MCP_IDEMPOTENCY_KEY_META,
  type McpClientLike,
  type McpToolsOptions,
  type McpToolInfo,
  type McpToolAnnotations,
  type McpToolEffect,
  type McpCallToolResult,
  type McpContentPart,
  type McpRequestOptions,
} from "./mcp.js";
export { cutIndex, renderForSummary, type ContextOptions } from "./context.js";
export { diffManifests, makeManifest, ManifestChangedError, type AgentManifest, type ManifestChange } from "./manifest.js";
export { defineThread, sendToThread, type ThreadMessage, type ThreadState } from "./thread.js";
export { MEMORY_TOOLS, type Memory, type MemoryOptions } from "./memory.js";
