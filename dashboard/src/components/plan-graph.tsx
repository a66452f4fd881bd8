import type { PlanNode, PlanView } from "../agent-view";
import { duration } from "../format";

const W = 210;
const H = 78;
const GAP_X = 56;
const GAP_Y = 18;
const PAD = 8;

/** Columns by depth: a node sits one column right of its deepest dependency. */
function layout(nodes: PlanNode[]): { positions: Map<string, { x: number; y: number }>; width: number; height: number } {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const depth = new Map<string, number>();
  const depthOf = (node: PlanNode, seen: Set<string>): number => {
    const known = depth.get(node.id);
    if (known !== undefined) return known;
    if (seen.has(node.id)) return 0; // a cycle cannot be journaled; guard anyway
    seen.add(node.id);
    let d = 0;
    for (const dep of node.deps) {
      const parent = byId.get(dep);
      if (parent) d = Math.max(d, depthOf(parent, seen) + 1);
    }
    depth.set(node.id, d);
    return d;
  };
  const columns: PlanNode[][] = [];
  for (const node of nodes) (columns[depthOf(node, new Set())] ??= []).push(node);
  const positions = new Map<string, { x: number; y: number }>();
  columns.forEach((column, c) => column.forEach((node, r) => positions.set(node.id, { x: PAD + c * (W + GAP_X), y: PAD + r * (H + GAP_Y) })));
  const rows = Math.max(1, ...columns.map((column) => column?.length ?? 0));
  return { positions, width: PAD * 2 + columns.length * W + Math.max(0, columns.length - 1) * GAP_X, height: PAD * 2 + rows * H + (rows - 1) * GAP_Y };
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** What a node's third line says: why it was skipped, its error, or its note. */
function detail(node: PlanNode): string {
  if (node.status === "skipped") return `skipped: ${node.skippedBecause ?? "a dependency"} failed`;
  if (node.status === "failed" && node.error?.message) return `error: ${node.error.message}`;
  return node.note ? `note: ${node.note}` : (node.label ?? node.kind);
}

function timing(node: PlanNode, now: number): string {
  const parts: string[] = [];
  if (node.attempts > 0) parts.push(`${node.attempts} attempt${node.attempts === 1 ? "" : "s"}`);
  if (node.startedAt !== undefined) parts.push(duration((node.endedAt ?? now) - node.startedAt) + (node.endedAt === undefined ? " so far" : ""));
  return parts.join(" · ") || "not started";
}

/**
 * A plan as a DAG (SVG): a box per node in columns by depth, arrows from each dependency; the
 * node's state by colour and word, attempts, duration, and its note, error or why it was skipped.
 * A running node is highlighted. Text is set as SVG text nodes (escaped by React).
 */
export function PlanGraph({ plan, now = Date.now() }: { plan: PlanView; now?: number }) {
  const { positions, width, height } = layout(plan.nodes);
  const byId = new Map(plan.nodes.map((n) => [n.id, n]));
  const summary = plan.nodes.map((n) => `${n.id} ${n.status}`).join(", ");
  return (
    <div className="plan-graph-box">
      <svg
        className="plan-graph"
        data-plan-graph={plan.name}
        viewBox={`0 0 ${width} ${height}`}
        width={width}
        height={height}
        role="img"
        aria-label={`Plan ${plan.name} as a graph: ${summary}`}
      >
        <defs>
          <marker id={`arrow-${plan.name}`} viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" className="plan-arrow" />
          </marker>
        </defs>
        {plan.nodes.flatMap((node) =>
          node.deps.map((dep) => {
            const from = positions.get(dep);
            const to = positions.get(node.id);
            if (!from || !to) return null;
            const x1 = from.x + W;
            const y1 = from.y + H / 2;
            const x2 = to.x - 2;
            const y2 = to.y + H / 2;
            const blocked = node.status === "skipped" && (byId.get(dep)?.status === "failed" || byId.get(dep)?.status === "skipped");
            return (
              <path
                key={`${dep}->${node.id}`}
                data-edge={`${dep}->${node.id}`}
                className={`plan-edge ${blocked ? "plan-edge-blocked" : ""}`}
                d={`M ${x1} ${y1} C ${x1 + GAP_X / 2} ${y1}, ${x2 - GAP_X / 2} ${y2}, ${x2} ${y2}`}
                markerEnd={`url(#arrow-${plan.name})`}
              />
            );
          }),
        )}
        {plan.nodes.map((node) => {
          const at = positions.get(node.id)!;
          return (
            <g
              key={node.id}
              transform={`translate(${at.x} ${at.y})`}
              className={`dag-node dag-${node.status}`}
              data-dag-node={node.id}
              data-node-status={node.status}
            >
              <title>{`${node.id} (${node.status})${node.label ? `: ${node.label}` : ""}${node.note ? `\nnote: ${node.note}` : ""}${node.error?.message ? `\nerror: ${node.error.message}` : ""}`}</title>
              <rect width={W} height={H} rx={6} className="dag-box" />
              <text x={10} y={19} className="dag-id">
                {clip(node.id, 18)}
              </text>
              <text x={W - 10} y={19} textAnchor="end" className="dag-status" data-dag-status>
                {node.status}
              </text>
              <text x={10} y={40} className="dag-timing" data-dag-timing>
                {timing(node, now)}
              </text>
              <text x={10} y={60} className="dag-detail" data-dag-detail>
                {clip(detail(node), 30)}
              </text>
            </g>
          );
        })}
      </svg>
    </div>
  );
}
