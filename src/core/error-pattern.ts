/**
 * An error message with what varies between occurrences masked, so failures that differ only by an
 * id, a number, a hash or a time fall into one group: UUIDs and ids that mix letters and digits
 * (`o-17`, `run_42`, `r7`) become `<id>`, ISO times `<time>`, hex strings of 8 or more digits and
 * `0x…` literals `<hex>`, other numbers `<n>`. Whitespace is collapsed; the result is at most 200
 * characters.
 *
 * @example
 * errorPattern("order o-1042 failed after 3 attempts (trace 9f86d081884c7d65)");
 * // "order <id> failed after <n> attempts (trace <hex>)"
 */
export function errorPattern(message: string): string {
  return message
    .slice(0, 2000)
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<id>")
    .replace(/\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?/g, "<time>")
    .replace(/\b0x[0-9a-f]+\b/gi, "<hex>")
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi, "<hex>")
    .replace(/\b(?=[\w.:-]*[a-z])(?=[\w.:-]*\d)[a-z0-9]+(?:[-_.:][a-z0-9]+)*\b/gi, "<id>")
    .replace(/\d+(?:\.\d+)?/g, "<n>")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 200);
}
