/**
 * The dashboard's Content-Security-Policy: its own scripts, styles and API only (no inline code, no
 * third-party origin), the inline SVG icon as a `data:` image, and no framing by any page
 * (`frame-ancestors 'none'`), so the one-click answer page (human requests) cannot be overlaid by another site.
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** API responses are data, never a page: nothing may load from them or frame them. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * Headers every response carries: the CSP of the dashboard or of the API, no framing
 * (`X-Frame-Options: DENY` for browsers without `frame-ancestors`), no MIME sniffing, and no
 * `Referer` sent from the dashboard (its URLs name runs).
 */
export function setSecurityHeaders(headers: Headers, path: string): void {
  const dashboard = path === "/ui" || path.startsWith("/ui/");
  headers.set("content-security-policy", dashboard ? DASHBOARD_CSP : API_CSP);
  headers.set("x-frame-options", "DENY");
  headers.set("x-content-type-options", "nosniff");
  headers.set("referrer-policy", "no-referrer");
}
