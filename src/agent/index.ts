/**
 * `cairn/agent`: durable agent loops. `defineAgent` makes a workflow whose every model call and tool
 * call is a journaled step; tools declare how their effects behave after a crash; approvals are
 * durable questions; budgets are folds of the journal; plans are journaled DAGs of parallel tasks
 * (`runPlan`, `planTool`); the prompt is kept within the window by journaled summaries; working
 * memory and full-text search over the run's history; conversations that span runs (`defineThread`);
 * tools can also be loaded from an MCP server's tool list (`toolsFromMcp`). The model layer is
 * provider-neutral: adapters for the Anthropic SDK, the OpenAI SDK (Responses API) and any Vercel AI
 * SDK language model, and a scripted model for tests.
 * @packageDocumentation
 */
export * from "./model/index.js";
export { agentTool, defineAgent, type AgentDefinition, type AgentInput, type AgentResult, type AgentTool } from "./agent.js";
export {
  defineTool,
  argumentsHash,
  canonicalJson,
  type Tool,
  type ToolDefinition,
  type ToolContext,
  type ApprovalPolicy,
  type WorkflowToolContext,
} from "./tool.js";
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
export { diffManifests, makeManifest, ManifestChangedError, type AgentManifest, type BudgetLimits, type ManifestChange } from "./manifest.js";
export { defineThread, sendToThread, type ThreadInput, type ThreadMessage, type ThreadOptions, type ThreadState } from "./thread.js";
export { MEMORY_TOOLS, type Memory, type MemoryOptions } from "./memory.js";
export {
  Plan,
  createPlan,
  runPlan,
  type ChildPlanNode,
  type DepResults,
  type PlanEdit,
  type PlanNode,
  type PlanNodeResult,
  type PlanOptions,
  type PlanResult,
  type PlanReviser,
  type StepPlanNode,
} from "./plan.js";
export {
  applyEdit,
  findCycle,
  type PlanEditSpec,
  type PlanNodeKind,
  type PlanNodeSpec,
  type PlanNodeState,
  type PlanNodeStatus,
  type PlanState,
} from "./plan-graph.js";
export { planTool, type PlanToolOptions } from "./plan-tool.js";
export { planViews, type PlanView } from "./plan-view.js";
export type { UnconfirmedCallsOptions, ModelCall, FailedModel } from "./model-call.js";
export type { StepFlowOptions } from "../core/step-flow.js";
