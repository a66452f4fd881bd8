import type { AgentRunView, AgentSpend, TranscriptItem } from "../agent/transcript-view.js";
import { formatMicroUsd } from "../agent/model/cost.js";
import { oneLine, preview, truncate } from "./format.js";

/** A transcript item as one or more indented lines (text kept to a readable length). */
export function transcriptLines(item: TranscriptItem): string[] {
  const label = (name: string) => name.padEnd(10);
  switch (item.kind) {
    case "user":
      return [`${label("user")} ${truncate(oneLine(item.text), 400)}`];
    case "assistant":
      return [`${label("assistant")} ${truncate(oneLine(item.text), 400)}`];
    case "tool-call":
      return [`${label("tool call")} ${item.name} ${preview(item.arguments, 300)}  (call ${item.callId})`];
    case "tool-result": {
      const what = item.error !== undefined ? `failed: ${truncate(oneLine(item.error), 300)}` : preview(item.result, 300);
      const via = item.via ? ` [settled by ${item.via}]` : "";
      return [`${label("result")} ${item.name} → ${what}${via}  (call ${item.callId}${item.idempotencyKey ? `, key ${item.idempotencyKey}` : ""})`];
    }
    case "approval": {
      const answer = item.answer;
      const decided = answer
        ? `${answer.option ?? answer.action}${answer.by ? ` by ${answer.by}` : ""}${answer.value === undefined ? "" : ` with ${preview(answer.value, 200)}`}${answer.message ? ` — "${truncate(oneLine(answer.message), 200)}"` : ""}`
        : "waiting for a person";
      return [`${label("approval")} ${item.tool} (call ${item.callId}): ${decided}`];
    }
    case "question": {
      const answer = item.answer;
      const lines = [`${label("question")} ${truncate(oneLine(item.question), 300)}`];
      if (item.context !== undefined) lines.push(`${label("")} context ${preview(item.context, 400)}`);
      lines.push(
        `${label("")} ${answer ? `answered ${answer.option ?? answer.action}${answer.by ? ` by ${answer.by}` : ""}${answer.value === undefined ? "" : ` ${preview(answer.value, 200)}`}` : "waiting for a person (cairn human-requests)"}`,
      );
      return lines;
    }
    case "summary":
      return [`${label("summary")} ${truncate(oneLine(item.text), 400)}`];
    case "hosted-tool": {
      const parts = [`${label("hosted")} ${item.name}`];
      if (item.input !== undefined) parts.push(preview(item.input, 200));
      if (item.output !== undefined) parts.push(`→ ${preview(item.output, 200)}`);
      return [`${parts.join(" ")}  (${item.phase === "result" ? "result" : "ran by the provider"}${item.id ? `, ${item.id}` : ""})`];
    }
    case "fallback":
      return [`${label("fallback")} ${item.from} failed (${truncate(oneLine(item.error), 200)}); ${item.to} answered`];
  }
}

/** The spend block: usage, cost, what may have been billed, and the limit. */
export function spendLines(spend: AgentSpend): string[] {
  const u = spend.usage;
  const prompt = u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens;
  const lines = [
    `model calls  ${spend.modelCalls}   tool calls ${spend.toolCalls}`,
    `tokens       ${prompt} prompt (${u.cacheReadTokens} cached) · ${u.outputTokens} output (${u.reasoningTokens} reasoning)`,
    `cost         ${formatMicroUsd(spend.costMicros)}${spend.unpricedCalls > 0 ? ` + unknown (${spend.unpricedCalls} call${spend.unpricedCalls === 1 ? "" : "s"} of a model without a price: defineAgent({ prices }))` : ""}`,
  ];
  if (spend.possiblyBilledMicros > 0 || spend.unconfirmedSends > 0)
    lines.push(`possibly billed  ${formatMicroUsd(spend.possiblyBilledMicros)} (estimated: model calls sent without a journaled response)`);
  if (spend.inFlightCalls > 0)
    lines.push(`in flight    ${spend.inFlightCalls} call${spend.inFlightCalls === 1 ? "" : "s"}, up to ${formatMicroUsd(spend.inFlightMicros)}`);
  const limit = spend.limits?.maxCostMicros;
  if (typeof limit === "number") lines.push(`limit        ${formatMicroUsd(limit)} (spent and possibly billed count against it)`);
  return lines;
}

/** The whole view of an agent run: transcript, then spend. */
export function agentRunLines(view: AgentRunView): string[] {
  return ["Transcript", ...view.items.flatMap(transcriptLines).map((line) => `  ${line}`), "", "Spend", ...spendLines(view.spend).map((line) => `  ${line}`)];
}
