import { describe, expect, it } from "vitest";
import { Counter, Gauge, Histogram, renderMetrics } from "./prometheus.js";

describe("Prometheus text format", () => {
  it("writes HELP and TYPE, escapes label values, and keeps one series per label set", () => {
    const counter = new Counter("c_total", "A counter.\nTwo lines.");
    counter.inc({ workflow: 'say "hi"\\now\n' });
    counter.inc({ b: "2", a: "1" }, 2);
    counter.inc({ a: "1", b: "2" }, 0.5);
    counter.inc({ a: "1", b: "2" }, -3); // ignored: counters never go down
    const gauge = new Gauge("g", "A gauge.");
    gauge.reset([{ labels: {}, value: 3 }]);
    expect(renderMetrics([counter, gauge])).toBe(
      [
        "# HELP c_total A counter.\\nTwo lines.",
        "# TYPE c_total counter",
        'c_total{workflow="say \\"hi\\"\\\\now\\n"} 1',
        'c_total{b="2",a="1"} 2.5',
        "# HELP g A gauge.",
        "# TYPE g gauge",
        "g 3",
        "",
      ].join("\n"),
    );
  });

  it("histograms count into cumulative buckets with +Inf, _sum and _count", () => {
    const histogram = new Histogram("h_seconds", "A histogram.", [0.1, 1]);
    for (const value of [0.05, 0.5, 0.7, 5, NaN]) histogram.observe({ w: "x" }, value);
    expect(renderMetrics([histogram]).split("\n")).toEqual([
      "# HELP h_seconds A histogram.",
      "# TYPE h_seconds histogram",
      'h_seconds_bucket{w="x",le="0.1"} 1',
      'h_seconds_bucket{w="x",le="1"} 3',
      'h_seconds_bucket{w="x",le="+Inf"} 4',
      'h_seconds_sum{w="x"} 6.25',
      'h_seconds_count{w="x"} 4',
      "",
    ]);
  });
});
