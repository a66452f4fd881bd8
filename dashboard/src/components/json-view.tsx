import { preview } from "../format";

/** A value as a one-line preview that opens into pretty JSON. */
export function JsonView({ value, max = 140 }: { value: unknown; max?: number }) {
  if (value === undefined) return null;
  const short = preview(value, max);
  const full = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  if (full === short) return <code className="json">{short}</code>;
  return (
    <details className="json">
      <summary>
        <code>{short}</code>
      </summary>
      <pre>{full}</pre>
    </details>
  );
}
