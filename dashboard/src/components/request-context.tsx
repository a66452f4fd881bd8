import { JsonView } from "./json-view";

/**
 * A request's `context` (what the run shows the person to decide) as a readable list of fields, not
 * JSON text: strings as text (React escapes them), nested objects as nested lists, long or deep
 * values as folding JSON.
 */
export function RequestContext({ context }: { context: unknown }) {
  if (context === undefined || context === null) return null;
  return (
    <div className="request-context" data-context>
      <div className="muted request-context-title">context</div>
      <ContextValue value={context} depth={0} />
    </div>
  );
}

function ContextValue({ value, depth }: { value: unknown; depth: number }) {
  if (value === null) return <span className="muted">none</span>;
  if (typeof value === "string") return <span className="context-text">{value}</span>;
  if (typeof value === "number" || typeof value === "boolean") return <span className="mono">{String(value)}</span>;
  if (Array.isArray(value)) {
    if (value.every((item) => item === null || typeof item !== "object") && value.length <= 20)
      return <span>{value.map((item) => (typeof item === "string" ? item : String(item))).join(", ")}</span>;
    return <JsonView value={value} max={120} />;
  }
  if (typeof value === "object" && depth < 3) {
    const fields = Object.entries(value as Record<string, unknown>);
    if (fields.length === 0) return <span className="muted">(empty)</span>;
    return (
      <dl className="context-fields">
        {fields.map(([key, field]) => (
          <div key={key} className="context-field" data-context-key={key}>
            <dt>{key}</dt>
            <dd>
              <ContextValue value={field} depth={depth + 1} />
            </dd>
          </div>
        ))}
      </dl>
    );
  }
  return <JsonView value={value} max={120} />;
}
