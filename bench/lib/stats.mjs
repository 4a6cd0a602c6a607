// Small statistics and formatting helpers for the benchmark driver.

/** Median of a list of numbers (mean of the two middle values for even length). */
export function median(values) {
  const xs = Array.from(values)
    .filter((v) => Number.isFinite(v))
    .sort((a, b) => a - b);
  if (xs.length === 0) return NaN;
  const mid = xs.length >> 1;
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

/**
 * Percentile p (0..100) of an ascending-sorted array, linear interpolation
 * between closest ranks (the common "type 7" definition).
 */
export function percentileSorted(sorted, p) {
  const n = sorted.length;
  if (n === 0) return NaN;
  if (n === 1) return sorted[0];
  const rank = (p / 100) * (n - 1);
  const lo = Math.floor(rank);
  const hi = Math.min(lo + 1, n - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

/** Percentiles of an unsorted numeric array (copied into a sorted Float64Array). */
export function percentiles(values, ps) {
  const sorted = Float64Array.from(values).sort();
  return ps.map((p) => percentileSorted(sorted, p));
}

export function min(values) {
  return Math.min(...values);
}

export function max(values) {
  return Math.max(...values);
}

// ---- formatting -------------------------------------------------------------

const intFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** 1234567.8 -> "1,234,568"; non-finite -> "-". */
export function fmtInt(v) {
  return Number.isFinite(v) ? intFmt.format(v) : "-";
}

/** Microseconds with one decimal (two below 10 µs); non-finite -> "-". */
export function fmtUs(v) {
  if (!Number.isFinite(v)) return "-";
  return v < 10 ? v.toFixed(2) : v.toFixed(1);
}

/** Ratio as "12.34x"; non-finite -> "-". */
export function fmtRatio(v) {
  if (!Number.isFinite(v)) return "-";
  if (v >= 100) return `${v.toFixed(0)}x`;
  if (v >= 10) return `${v.toFixed(1)}x`;
  return `${v.toFixed(2)}x`;
}

/**
 * Render a plain-text (Markdown-compatible) table.
 * @param {Array<Array<string|[string, number]>>} headerRows  header lines; a cell may be
 *        [text, span] to span several columns (a group title, centred)
 * @param {string[][]} rows   body rows
 * @param {("l"|"r")[]} [align]  per-column alignment (default: first left, rest right)
 */
export function renderTable(headerRows, rows, align) {
  const cells = (r) => {
    const out = [];
    let col = 0;
    for (const c of r) {
      const [text, span] = Array.isArray(c) ? c : [c, 1];
      out.push({ text: String(text ?? ""), col, span });
      col += span;
    }
    return out;
  };
  const hdr = headerRows.map(cells);
  const body = rows.map(cells);
  const ncol = Math.max(...[...hdr, ...body].map((r) => r.reduce((n, c) => n + c.span, 0)));
  const al = align ?? Array.from({ length: ncol }, (_, i) => (i === 0 ? "l" : "r"));
  const width = new Array(ncol).fill(0);
  for (const r of [...hdr, ...body])
    for (const c of r) if (c.span === 1) width[c.col] = Math.max(width[c.col], c.text.length);
  const spanWidth = (c) => width.slice(c.col, c.col + c.span).reduce((a, b) => a + b, 0) + 3 * (c.span - 1);
  for (const r of hdr) {
    for (const c of r) {
      const extra = c.text.length - spanWidth(c);
      if (c.span > 1 && extra > 0) width[c.col + c.span - 1] += extra;
    }
  }
  const line = (r) =>
    "| " +
    r
      .map((c) => {
        const w = spanWidth(c);
        if (c.span > 1) {
          const left = Math.floor((w - c.text.length) / 2);
          return (" ".repeat(left) + c.text).padEnd(w);
        }
        return al[c.col] === "l" ? c.text.padEnd(w) : c.text.padStart(w);
      })
      .join(" | ") +
    " |";
  const sep =
    "|" +
    width.map((w, c) => (al[c] === "l" ? ":" : "-") + "-".repeat(w) + (al[c] === "r" ? ":" : "-")).join("|") +
    "|";
  return [...hdr.map(line), sep, ...body.map(line)].join("\n");
}
