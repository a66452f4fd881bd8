// Small statistics helpers: every figure the bench reports is a median over repetitions.

/** The q-quantile (0..1) of numbers, by linear interpolation between closest ranks. */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export const median = (values) => quantile(values, 0.5);

/** { median, min, max, spread, samples }: spread is (max - min) / median. */
export function summarize(samples) {
  const med = median(samples);
  const min = Math.min(...samples);
  const max = Math.max(...samples);
  return { median: med, min, max, spread: med === 0 ? 0 : (max - min) / med, samples };
}

/** 12345.6 → "12,346"; 12.345 → "12.3"; 0.1234 → "0.123". */
export function fmt(value, digits) {
  if (value === undefined || value === null || Number.isNaN(value)) return "–";
  const d = digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : Math.abs(value) >= 1 ? 2 : 3);
  return value.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
}


/** fmt with an explicit sign: +1.2, −0.3 (a minus sign, not a hyphen). */
export function signed(value, digits) {
  if (value === undefined || value === null || Number.isNaN(value)) return "–";
  const text = fmt(Math.abs(value), digits);
  return Number(text.replaceAll(",", "")) === 0 ? text : `${value < 0 ? "−" : "+"}${text}`;
}
