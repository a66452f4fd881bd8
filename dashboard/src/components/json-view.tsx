import { useState } from "react";
import { preview } from "../format";
import { CopyButton } from "./copy-button";
import { JsonTree } from "./json-tree";
import "./json-view.css";

/** The exact JSON of a value, as the copy button copies it (indented by two spaces). */
export function jsonText(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

/**
 * A value as a one-line preview that opens into a foldable tree with a copy button. The tree is
 * built only while open: a journal of thousands of entries keeps one summary per value in the DOM.
 * Every key and value is rendered as text, never as markup.
 */
export function JsonView({ value, max = 140 }: { value: unknown; max?: number }) {
  const [open, setOpen] = useState(false);
  if (value === undefined) return null;
  const short = preview(value, max);
  const full = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  if (full === short) return <code className="json">{short}</code>;
  return (
    <details className="json" onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>
        <code>{short}</code>
      </summary>
      {open && (
        <div className="json-body" data-json-view>
          <CopyButton text={jsonText(value)} label="Copy JSON" />
          <JsonTree value={value} />
        </div>
      )}
    </details>
  );
}
