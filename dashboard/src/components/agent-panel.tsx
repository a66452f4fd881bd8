import type { ApiJournalEntry } from "cairn/client";
import { useMemo } from "react";
import { agentView, budgetGauges, extraSpend, isAgentRun, planViews, type Block, type Gauge, type Message, type PlanView } from "../agent-view";
import { usd } from "../format";
import { JsonView } from "./json-view";
import { LiveOutputView, type LiveOutput } from "./live-output";
import { PlanGraph } from "./plan-graph";

/** For agent runs: the budget spent, the transcript, and the plans, all read from the journal. */
export function AgentPanel({ entries, input, partial }: { entries: ApiJournalEntry[]; input?: unknown; partial?: LiveOutput | undefined }) {
  const agent = useMemo(() => (isAgentRun(entries) ? agentView(entries, input) : undefined), [entries, input]);
  const plans = useMemo(() => planViews(entries), [entries]);
  const extra = useMemo(() => extraSpend(entries), [entries]);
  if (!agent && plans.length === 0) return null;
  return (
    <div className="agent">
      {agent && (
        <>
          <h2>Budget</h2>
          <div className="facts budget" aria-label="budget">
            <Total
              label="cost"
              title={extra.unpricedCalls > 0 ? `${extra.unpricedCalls} call(s) of a model without a price: their cost is unknown, not $0` : undefined}
            >
              {usd(agent.totals.costMicros)}
              {extra.unpricedCalls > 0 ? " + unknown" : ""}
            </Total>
            <Total
              label="possibly billed"
              title="Estimated cost of sends cut short by a crash, with no journaled response: the provider may have billed them. Charged against the cost limit."
            >
              {usd(extra.possiblyBilledMicros)}
            </Total>
            {extra.unpricedCalls > 0 && <Total label="unpriced calls">{extra.unpricedCalls}</Total>}
            {extra.inFlightCalls > 0 && <Total label="in flight">{`${extra.inFlightCalls} (≈${usd(extra.inFlightMicros)})`}</Total>}
            <Total label="model calls">{agent.totals.steps}</Total>
            <Total label="tool calls">{agent.totals.toolCalls}</Total>
            <Total label="input tokens">{agent.totals.usage.inputTokens}</Total>
            <Total label="output tokens">{agent.totals.usage.outputTokens}</Total>
            <Total label="cache read">{agent.totals.usage.cacheReadTokens}</Total>
            <Total label="cache write">{agent.totals.usage.cacheWriteTokens}</Total>
            <Total label="reasoning">{agent.totals.usage.reasoningTokens}</Total>
          </div>
          <p className="muted">Totals from the {agent.totalsFrom}.</p>
          <GaugeList gauges={budgetGauges(agent, extra.possiblyBilledMicros)} />
          <h2>Transcript</h2>
          <ol className="transcript" aria-label="transcript">
            {agent.messages.map((message, i) => (
              <li key={i} className={`msg msg-${message.role}`} data-role={message.role}>
                <span className="msg-role">{message.role}</span>
                <MessageBody message={message} />
              </li>
            ))}
            {partial && <LiveOutputView output={partial} asMessage />}
          </ol>
        </>
      )}
      {plans.map((plan) => (
        <Plan key={plan.opKey} plan={plan} />
      ))}
    </div>
  );
}

/** Spend against each limit of the run's budget, as bars that turn amber past 80 % and red at the limit. */
function GaugeList({ gauges }: { gauges: Gauge[] }) {
  if (gauges.length === 0) return <p className="muted">No budget limits recorded for this run.</p>;
  return (
    <div className="gauges" aria-label="budget gauge">
      {gauges.map((gauge) => {
        const ratio = gauge.limit > 0 ? gauge.spent / gauge.limit : 1;
        const level = ratio >= 1 ? "over" : ratio >= 0.8 ? "near" : "ok";
        const show = (n: number) => (gauge.key === "cost" ? usd(n) : n.toLocaleString("en-US"));
        return (
          <div
            key={gauge.key}
            className={`gauge gauge-${level}`}
            data-gauge={gauge.key}
            role="meter"
            aria-label={`${gauge.label} against its limit`}
            aria-valuemin={0}
            aria-valuemax={gauge.limit}
            aria-valuenow={gauge.spent}
          >
            <div className="gauge-head">
              <span>{gauge.label}</span>
              <span className="gauge-text">
                {show(gauge.spent)} / {show(gauge.limit)} ({Math.round(ratio * 100)}%)
              </span>
            </div>
            <div className="gauge-track">
              <div className="gauge-fill" style={{ width: `${Math.min(100, ratio * 100)}%` }} />
            </div>
          </div>
        );
      })}
    </div>
  );
}

function Total({ label, title, children }: { label: string; title?: string | undefined; children: React.ReactNode }) {
  return (
    <div className="fact" title={title}>
      <div className="fact-label">{label}</div>
      <div className="fact-value">{children}</div>
    </div>
  );
}

function MessageBody({ message }: { message: Message }) {
  if (message.role === "user") {
    const text = typeof message.content === "string" ? message.content : message.content.map(userBlockText).join("\n");
    return <div className="msg-text">{text}</div>;
  }
  return (
    <div>
      {(message.content as Block[]).map((block, i) => (
        <BlockView key={i} block={block} />
      ))}
    </div>
  );
}

/** A user block as text: images and files by what they are (their bytes are not shown). */
function userBlockText(block: { type?: unknown; text?: unknown; filename?: unknown; source?: unknown }): string {
  if (typeof block.text === "string") return block.text;
  const source = (block.source ?? {}) as { type?: unknown; url?: unknown; mediaType?: unknown; fileId?: unknown };
  const where = typeof source.url === "string" ? ` ${source.url}` : typeof source.fileId === "string" ? ` ${source.fileId}` : "";
  const what = typeof block.filename === "string" ? ` ${block.filename}` : typeof source.mediaType === "string" ? ` ${source.mediaType}` : "";
  return `[${String(block.type ?? "block")}${what}${where}]`;
}

function BlockView({ block }: { block: Block }) {
  const b = block as Record<string, unknown>;
  switch (block.type) {
    case "text":
      return <div className="msg-text">{String(b.text)}</div>;
    case "tool_use":
      return (
        <div className="tool-use" data-tool-call={String(b.id)}>
          → call <b>{String(b.name)}</b> <span className="muted mono">{String(b.id)}</span> <JsonView value={b.input} />
        </div>
      );
    case "tool_result":
      return (
        <div className={`tool-result ${b.isError ? "err" : ""}`} data-tool-result={String(b.toolUseId)}>
          ← result <span className="muted mono">{String(b.toolUseId)}</span>
          {b.isError ? " (error)" : ""} <JsonView value={b.content} />
        </div>
      );
    case "thinking":
      return <div className="muted">(thinking) {typeof b.thinking === "string" ? b.thinking.slice(0, 200) : ""}</div>;
    case "hosted_tool":
      return (
        <div className="tool-use" data-hosted-tool={String(b.name)}>
          ⇢ hosted <b>{String(b.name)}</b> <span className="muted">({String(b.phase)})</span> {b.input !== undefined && <JsonView value={b.input} />}
          {b.output !== undefined && <JsonView value={b.output} />}
        </div>
      );
    default:
      return <div className="muted">({block.type})</div>;
  }
}

function Plan({ plan }: { plan: PlanView }) {
  return (
    <div className="plan" data-plan={plan.name}>
      <h2>
        Plan {plan.name} <span className="muted">revision {plan.revision}</span>
      </h2>
      <PlanGraph plan={plan} />
      <ul className="plan-nodes">
        {plan.nodes.map((node) => (
          <li key={node.id} data-node={node.id} data-node-status={node.status}>
            <span className={`badge plan-${node.status}`}>{node.status}</span> <b className="mono">{node.id}</b> <span className="muted">{node.kind}</span>
            {node.label ? ` ${node.label}` : ""}
            {node.deps.length > 0 && <span className="muted"> · after {node.deps.join(", ")}</span>}
            {node.status === "done" && (
              <>
                {" "}
                <JsonView value={node.result} max={80} />
              </>
            )}
            {node.error && <span className="err"> {node.error.message}</span>}
            {node.status === "skipped" && <span className="muted"> · skipped: {node.skippedBecause ?? "a dependency"} failed</span>}
            {node.note && <span className="muted"> · note: {node.note}</span>}
          </li>
        ))}
      </ul>
    </div>
  );
}
