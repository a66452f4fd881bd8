/**
 * The Prometheus text exposition format (version 0.0.4), written by hand: Cairn needs counters,
 * gauges and histograms with labels, which are a few dozen lines, not a dependency with a global registry.
 */

/** Label values by label name. */
export type Labels = Record<string, string>;

/** The content type of {@link renderMetrics}' output. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  lines(): string[];
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function labelText(labels: Labels, extra?: [string, string]): string {
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  if (extra) pairs.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return pairs.length === 0 ? "" : `{${pairs.join(",")}}`;
}

function keyOf(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function num(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** A monotonically increasing count per label set. */
export class Counter implements Family {
  readonly type = "counter";
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** Adds `by` (default 1; must not be negative) to the series of `labels`. */
  inc(labels: Labels = {}, by = 1): void {
    if (!(by >= 0)) return;
    const key = keyOf(labels);
    const found = this.values.get(key);
    if (found) found.value += by;
    else this.values.set(key, { labels: { ...labels }, value: by });
  }

  lines(): string[] {
    return [...this.values.values()].map(({ labels, value }) => `${this.name}${labelText(labels)} ${num(value)}`);
  }
}

/** Values set at scrape time. */
export class Gauge implements Family {
  readonly type = "gauge";
  private values: { labels: Labels; value: number }[] = [];
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  /** Replaces every series with these. */
  reset(values: { labels: Labels; value: number }[]): void {
    this.values = values;
  }

  lines(): string[] {
    return this.values.map(({ labels, value }) => `${this.name}${labelText(labels)} ${num(value)}`);
  }
}

/** Observations counted into cumulative buckets, per label set. */
export class Histogram implements Family {
  readonly type = "histogram";
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
  ) {}

  observe(labels: Labels, value: number): void {
    if (!Number.isFinite(value)) return;
    const key = keyOf(labels);
    let found = this.series.get(key);
    if (!found) this.series.set(key, (found = { labels: { ...labels }, counts: this.buckets.map(() => 0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) found.counts[i]! += 1;
    found.sum += value;
    found.count += 1;
  }

  lines(): string[] {
    const out: string[] = [];
    for (const { labels, counts, sum, count } of this.series.values()) {
      this.buckets.forEach((le, i) => out.push(`${this.name}_bucket${labelText(labels, ["le", num(le)])} ${counts[i]}`));
      out.push(`${this.name}_bucket${labelText(labels, ["le", "+Inf"])} ${count}`);
      out.push(`${this.name}_sum${labelText(labels)} ${num(sum)}`);
      out.push(`${this.name}_count${labelText(labels)} ${count}`);
    }
    return out;
  }
}

/** The exposition of these families, each with its HELP and TYPE lines. */
export function renderMetrics(families: readonly Family[]): string {
  const out: string[] = [];
  for (const family of families) {
    out.push(`# HELP ${family.name} ${family.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`, `# TYPE ${family.name} ${family.type}`, ...family.lines());
  }
  return `${out.join("\n")}\n`;
}
