import { useState } from "react";

/** Children of an object or array shown before a "show more" button. */
export const CHILD_LIMIT = 50;
/** Characters of a string shown before a "show all" button. */
export const STRING_LIMIT = 500;

/**
 * A JSON value as a tree: objects and arrays fold with a button (Enter or Space toggles it; the
 * button says whether it is expanded), long arrays and objects show their first {@link CHILD_LIMIT}
 * children, long strings their first {@link STRING_LIMIT} characters, each with a button for the rest.
 * The top level starts open, deeper levels folded. All of it is text: keys and values are never markup.
 */
export function JsonTree({ value }: { value: unknown }) {
  return (
    <ul className="json-tree" data-json-tree>
      <JsonNode name={undefined} value={value} depth={0} />
    </ul>
  );
}

function JsonNode({ name, value, depth }: { name: string | undefined; value: unknown; depth: number }) {
  if (value !== null && typeof value === "object") return <Branch name={name} value={value as object} depth={depth} />;
  return (
    <li className="json-leaf">
      {name !== undefined && <Key name={name} />}
      <Scalar value={value} />
    </li>
  );
}

function Key({ name }: { name: string }) {
  return <span className="json-key">{name}: </span>;
}

function Branch({ name, value, depth }: { name: string | undefined; value: object; depth: number }) {
  const [open, setOpen] = useState(depth === 0);
  const [shown, setShown] = useState(CHILD_LIMIT);
  const isArray = Array.isArray(value);
  const entries: [string, unknown][] = isArray ? (value as unknown[]).map((item, i) => [String(i), item]) : Object.entries(value);
  const [start, end] = isArray ? ["[", "]"] : ["{", "}"];
  const count = `${entries.length} ${isArray ? (entries.length === 1 ? "item" : "items") : entries.length === 1 ? "key" : "keys"}`;
  if (entries.length === 0)
    return (
      <li className="json-leaf">
        {name !== undefined && <Key name={name} />}
        <span className="json-punct">
          {start}
          {end}
        </span>
      </li>
    );
  const rest = entries.length - shown;
  return (
    <li className="json-branch" data-json-depth={depth}>
      <button
        type="button"
        className="json-toggle"
        aria-expanded={open}
        aria-label={`${open ? "Fold" : "Unfold"} ${name === undefined ? "value" : name} (${count})`}
        onClick={() => setOpen(!open)}
      >
        <span aria-hidden="true">{open ? "▾" : "▸"}</span>
      </button>
      {name !== undefined && <Key name={name} />}
      <span className="json-punct">{start}</span>
      {open ? (
        <>
          <ul className="json-children">
            {entries.slice(0, shown).map(([key, child]) => (
              <JsonNode key={key} name={isArray ? key : JSON.stringify(key)} value={child} depth={depth + 1} />
            ))}
          </ul>
          {rest > 0 && (
            <button type="button" className="small-button json-more" onClick={() => setShown(shown + CHILD_LIMIT * 4)}>
              show {Math.min(rest, CHILD_LIMIT * 4)} more of {rest}
            </button>
          )}
          <span className="json-punct">{end}</span>
        </>
      ) : (
        <span className="json-punct">
          {" … "}
          {end} <span className="muted">{count}</span>
        </span>
      )}
    </li>
  );
}

function Scalar({ value }: { value: unknown }) {
  const [all, setAll] = useState(false);
  if (typeof value === "string") {
    const text = JSON.stringify(value);
    if (all || text.length <= STRING_LIMIT) return <span className="json-string">{text}</span>;
    return (
      <>
        <span className="json-string">{text.slice(0, STRING_LIMIT)}…</span>{" "}
        <button type="button" className="small-button" data-json-show-all onClick={() => setAll(true)}>
          show all {value.length.toLocaleString("en-US")} characters
        </button>
      </>
    );
  }
  if (typeof value === "number" || typeof value === "bigint") return <span className="json-number">{String(value)}</span>;
  if (typeof value === "boolean" || value === null) return <span className="json-literal">{String(value)}</span>;
  return <span className="json-literal">{JSON.stringify(value) ?? String(value)}</span>;
}
