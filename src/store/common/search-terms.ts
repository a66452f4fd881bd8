/** The words of a search query: letters and digits, lower-cased, distinct, at most 32 of them. */
export function queryTerms(query: string): string[] {
  return [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])].slice(0, 32);
}
