/**
 * Control characters in run data (a model's text, a tool's arguments, a person's note) could move the
 * cursor, recolour or rewrite a terminal (ESC sequences, CR, C1 CSI). Everything the CLI prints goes
 * through this: each C0/C1 control character except newline and tab becomes a visible `\uXXXX`
 * escape, which is also a valid escape inside a JSON string, so `--json` output stays parseable.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g;

/** The text with terminal control characters shown as `\uXXXX`. */
export function terminalSafe(text: string): string {
  return text.replace(CONTROL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
