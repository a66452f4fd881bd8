// eslint-disable-next-line no-control-regex -- matching control characters is the point
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text safe to write to a terminal: control characters (C0 but newline and tab, DEL, C1) and
 * bidirectional overrides become visible escapes (`\x1b`, `\u202e`), so a run id, event type or
 * error stored by anyone cannot clear the screen, retitle the window or reorder what is shown.
 * Every CLI printer goes through it (print, note, tables, errors).
 */
export function escapeTerminal(text: string): string {
  return text.replace(TERMINAL_CONTROLS, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** JSON text with the characters JSON.stringify leaves raw (DEL, C1, bidi overrides) written as `\uXXXX`: still the same JSON. */
export function escapeJsonForTerminal(json: string): string {
  return json.replace(/[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
