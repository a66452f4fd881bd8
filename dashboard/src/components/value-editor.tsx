import { useState } from "react";

/** A JSON Schema, as the API gives a human request's `input`. */
export type JsonSchema = Record<string, unknown>;

/** One property of a simple object schema, edited by one input. */
export interface FieldSpec {
  name: string;
  kind: "string" | "number" | "integer" | "boolean" | "enum";
  required: boolean;
  choices?: string[];
  description?: string;
  fallback?: unknown;
}

/**
 * The fields of a simple object schema (every property a string, number, integer, boolean or
 * string enum), or undefined when the schema needs the JSON editor (nested objects, arrays, unions).
 */
export function simpleFields(schema: JsonSchema | null | undefined): FieldSpec[] | undefined {
  if (!schema || schema.type !== "object" || typeof schema.properties !== "object" || schema.properties === null) return undefined;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const fields: FieldSpec[] = [];
  for (const [name, raw] of Object.entries(schema.properties as Record<string, JsonSchema>)) {
    if (typeof raw !== "object" || raw === null) return undefined;
    const base = { name, required: required.has(name), ...(typeof raw.description === "string" ? { description: raw.description } : {}) };
    const fallback = "default" in raw ? { fallback: raw.default } : {};
    if (Array.isArray(raw.enum) && raw.enum.length > 0 && raw.enum.every((v) => typeof v === "string")) {
      fields.push({ ...base, ...fallback, kind: "enum", choices: raw.enum as string[] });
    } else if (raw.type === "string" || raw.type === "number" || raw.type === "integer" || raw.type === "boolean") {
      fields.push({ ...base, ...fallback, kind: raw.type });
    } else {
      return undefined;
    }
  }
  return fields.length > 0 ? fields : undefined;
}

type Draft = Record<string, string | boolean>;

function initialDraft(fields: FieldSpec[]): Draft {
  return Object.fromEntries(
    fields.map((f) => [f.name, f.kind === "boolean" ? f.fallback === true : f.fallback === undefined || f.fallback === null ? "" : String(f.fallback)]),
  );
}

/** The value the fields make: blank optional fields are left out, numbers are numbers. */
function valueOf(fields: FieldSpec[], draft: Draft): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  for (const field of fields) {
    const raw = draft[field.name];
    if (field.kind === "boolean") {
      value[field.name] = raw === true;
      continue;
    }
    const text = typeof raw === "string" ? raw : "";
    if (text === "" && (field.kind !== "string" || !field.required)) continue; // the server names a missing required field
    value[field.name] = field.kind === "number" || field.kind === "integer" ? Number(text) : text;
  }
  return value;
}

/** What the editor holds: a value to send, or why there is none yet. */
export type EditorValue = { ok: true; value: unknown } | { ok: false; error: string };

/**
 * Edits an answer's value: a field per property for a simple object schema, else a JSON textarea
 * (plain text is taken as a string when the request has no schema). `issues` are the server's
 * complaints by field name, shown under each field.
 */
export function useValueEditor(schema: JsonSchema | null, issues: Record<string, string>) {
  const fields = simpleFields(schema);
  const [draft, setDraft] = useState<Draft>(() => (fields ? initialDraft(fields) : {}));
  const [text, setText] = useState("");

  const read = (): EditorValue => {
    if (fields) return { ok: true, value: valueOf(fields, draft) };
    if (text.trim() === "") return schema ? { ok: false, error: "Write the value as JSON." } : { ok: true, value: undefined };
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch {
      return schema ? { ok: false, error: "The value is not valid JSON." } : { ok: true, value: text };
    }
  };

  const editor = fields ? (
    <div className="value-fields" role="group" aria-label="answer value">
      {fields.map((field) => {
        const id = `field-${field.name}`;
        const raw = draft[field.name];
        const set = (next: string | boolean) => setDraft((d) => ({ ...d, [field.name]: next }));
        const issue = issues[field.name];
        return (
          <div className={`field ${issue ? "invalid" : ""}`} key={field.name} data-field={field.name}>
            <label htmlFor={id}>
              {field.name}
              {field.required && field.kind !== "boolean" && <span className="req"> *</span>}
              <span className="muted field-type"> {field.kind}</span>
            </label>
            {field.kind === "boolean" ? (
              <input id={id} type="checkbox" checked={raw === true} onChange={(e) => set(e.target.checked)} />
            ) : field.kind === "enum" ? (
              <select id={id} value={String(raw)} onChange={(e) => set(e.target.value)}>
                {(!field.required || raw === "") && <option value="">—</option>}
                {field.choices!.map((choice) => (
                  <option key={choice} value={choice}>
                    {choice}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                type={field.kind === "string" ? "text" : "number"}
                step={field.kind === "integer" ? 1 : "any"}
                value={String(raw)}
                aria-invalid={issue ? true : undefined}
                onChange={(e) => set(e.target.value)}
              />
            )}
            {field.description && <div className="muted field-hint">{field.description}</div>}
            {issue && <div className="field-error">{issue}</div>}
          </div>
        );
      })}
    </div>
  ) : (
    <div className="value-json">
      <textarea
        aria-label="answer value"
        rows={4}
        className="mono"
        spellCheck={false}
        placeholder={schema ? "the value, as JSON" : "the value: JSON, or plain text (optional)"}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      {schema && (
        <details className="schema">
          <summary className="muted">schema</summary>
          <pre className="mono">{JSON.stringify(withoutMeta(schema), null, 2)}</pre>
        </details>
      )}
    </div>
  );
  return { editor, read, fields };
}

function withoutMeta(schema: JsonSchema): JsonSchema {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/**
 * The server's 422 for a value that does not match the schema reads
 * `… does not match its input schema: amount: Too small…; reason: …`: its issues by top-level field.
 */
export function schemaIssues(message: string): Record<string, string> | undefined {
  const marker = "does not match its input schema: ";
  const at = message.indexOf(marker);
  if (at < 0) return undefined;
  const issues: Record<string, string> = {};
  for (const part of message
    .slice(at + marker.length)
    .replace(/\.$/, "")
    .split("; ")) {
    const colon = part.indexOf(": ");
    if (colon < 0) continue;
    const path = part.slice(0, colon);
    const field = path.split(".")[0]!;
    const text = path === field ? part.slice(colon + 2) : `${path.slice(field.length + 1)}: ${part.slice(colon + 2)}`;
    issues[field] = issues[field] ? `${issues[field]}; ${text}` : text;
  }
  return issues;
}
