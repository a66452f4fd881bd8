/**
 * Placeholders for rows whose stored payload cannot be decoded (damaged by hand, or written by a
 * bug). A listing that meets one shows that row with its payloads left out and an `unreadable`
 * message, and goes on: one bad row never breaks a listing (docs/errors/PAYLOAD_UNREADABLE.md).
 */

/** The code an unreadable row's message starts with. */
export const PAYLOAD_UNREADABLE = "PAYLOAD_UNREADABLE";

/** The `unreadable` message of a row: what could not be decoded, why, and where to look. */
export function unreadableMessage(where: string, error: unknown): string {
  const detail = error instanceof Error ? error.message : String(error);
  return `${PAYLOAD_UNREADABLE}: the stored payload of ${where} cannot be decoded (${detail.slice(0, 200)}); it is left out of this view. See docs/errors/${PAYLOAD_UNREADABLE}.md.`;
}

/** `decode(text)`, or `fallback` with the message passed to `onError` when the text does not decode. */
export function decodeOr<T>(decode: () => T, fallback: T, where: string, onError: (message: string) => void): T {
  try {
    return decode();
  } catch (error) {
    onError(unreadableMessage(where, error));
    return fallback;
  }
}
