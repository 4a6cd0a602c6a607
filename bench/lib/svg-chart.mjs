// A hand-written SVG chart for the --report run: grouped horizontal bars, one
// panel (group) per workload, one bar per pool, each panel on its own axis
// (linear, or log10 when its values span more than 100x), every bar labelled
// with its value. No dependencies.

const FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif";

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Rough width of `text` at `size` px in a sans-serif font (for layout only). */
const textWidth = (text, size) => String(text).length * size * 0.62;

const fmtTick = (v) => {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  if (a >= 1) return `${+v.toPrecision(3)}`;
  return `${+v.toPrecision(3)}`;
};

function niceStep(range, count) {
  const raw = range / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
}

/**
 * A scale for one panel: { log, map(v) -> 0..1, ticks: number[] }.
 * Log when every value is > 0 and max/min > 100.
 */
export function makeScale(values) {
  const vs = values.filter((v) => Number.isFinite(v));
  const pos = vs.filter((v) => v > 0);
  const max = vs.length ? Math.max(...vs) : 1;
  if (pos.length >= 2 && pos.length === vs.length && max / Math.min(...pos) > 100) {
    // Bounds on the 1-2-5 ladder just outside the data; ticks at the powers of
    // ten inside them, plus the bounds themselves.
    const ladder = (e) => [1, 2, 5].map((m) => m * 10 ** e);
    const down = (v) => {
      const e = Math.floor(Math.log10(v));
      return [...ladder(e - 1), ...ladder(e)].filter((x) => x <= v * (1 + 1e-9)).pop();
    };
    const up = (v) => {
      const e = Math.floor(Math.log10(v));
      return [...ladder(e), ...ladder(e + 1)].find((x) => x >= v * (1 - 1e-9));
    };
    const lo = down(Math.min(...pos));
    const hi = up(max);
    const llo = Math.log10(lo);
    const lhi = Math.log10(hi);
    const ticks = [lo];
    for (let e = Math.ceil(llo + 1e-9); 10 ** e < hi * (1 - 1e-9); e++) ticks.push(10 ** e);
    ticks.push(hi);
    return {
      log: true,
      map: (v) => (v > 0 ? Math.min(1, Math.max(0, (Math.log10(v) - llo) / (lhi - llo))) : 0),
      ticks,
    };
  }
  const top = max > 0 ? max : 1;
  const step = niceStep(top, 5);
  const end = Math.ceil(top / step - 1e-9) * step;
  const ticks = [];
  for (let t = 0; t <= end + step / 2; t += step) ticks.push(+t.toPrecision(12));
  return { log: false, map: (v) => Math.min(1, Math.max(0, v / end)), ticks };
}

/**
 * @param {object} spec
 *   title, subtitle: strings at the top
 *   pools: [{ key, label, color }]
 *   panels: [{ title, note?, values: { [poolKey]: number|null|undefined },
 *              fmt(v) -> label text, missing?: { [poolKey]: string },
 *              scaleGroup?: panels with the same one share their axis }]
 *   columns: panels per row (default 2)
 */
export function renderChart(spec) {
  const cols = spec.columns ?? 2;
  const pools = spec.pools;
  const W = 1240;
  const margin = 20;
  const gap = 28;
  const panelW = (W - 2 * margin - gap * (cols - 1)) / cols;
  const labelW = Math.max(...pools.map((p) => textWidth(p.label, 12))) + 12;
  const valueW = 150; // room right of the longest bar for its label
  const barH = 17;
  const barGap = 5;
  const titleH = 42;
  const axisH = 22;
  const panelH = titleH + pools.length * (barH + barGap) - barGap + axisH + 18;
  const headerH = 92;
  const rows = Math.ceil(spec.panels.length / cols);
  const H = headerH + rows * panelH + margin;

  // Panels with the same scaleGroup share one axis (e.g. the same workload at
  // several thread counts), so their bars compare across panels too.
  const scales = new Map();
  const groups = new Map();
  for (const panel of spec.panels) {
    if (panel.scaleGroup == null) continue;
    if (!groups.has(panel.scaleGroup)) groups.set(panel.scaleGroup, []);
    groups.get(panel.scaleGroup).push(...pools.map((p) => panel.values[p.key]));
  }
  for (const [g, values] of groups) scales.set(g, makeScale(values));

  const out = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ` +
      `font-family="${FONT}" font-size="12">`,
  );
  out.push(`<title>${esc(spec.title)}</title>`); // the chart's text alternative
  out.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${margin}" y="30" font-size="19" font-weight="bold" fill="#222">${esc(spec.title)}</text>`);
  if (spec.subtitle) out.push(`<text x="${margin}" y="50" font-size="12" fill="#555">${esc(spec.subtitle)}</text>`);
  // legend
  let lx = margin;
  const ly = 72;
  for (const p of pools) {
    out.push(`<rect x="${lx}" y="${ly - 11}" width="14" height="14" rx="2" fill="${p.color}"/>`);
    out.push(`<text x="${lx + 20}" y="${ly}" fill="#222"${p.bold ? ' font-weight="bold"' : ""}>${esc(p.label)}</text>`);
    lx += 20 + textWidth(p.label, 12) + 26;
  }

  spec.panels.forEach((panel, idx) => {
    const col = idx % cols;
    const row = Math.floor(idx / cols);
    const x0 = margin + col * (panelW + gap);
    const y0 = headerH + row * panelH;
    const barX = x0 + labelW;
    const barW = panelW - labelW - valueW;
    const scale = scales.get(panel.scaleGroup ?? panel) ?? makeScale(pools.map((p) => panel.values[p.key]));
    out.push(`<g>`);
    out.push(
      `<rect x="${x0 - 8}" y="${y0}" width="${panelW + 16}" height="${panelH - 10}" rx="6" ` +
        `fill="#f7f7f9" stroke="#e1e1e6"/>`,
    );
    out.push(`<text x="${x0}" y="${y0 + 18}" font-size="13" font-weight="bold" fill="#222">${esc(panel.title)}</text>`);
    const sub = [panel.note, scale.log ? "log scale" : null].filter(Boolean).join(" · ");
    if (sub) out.push(`<text x="${x0}" y="${y0 + 31}" font-size="10.5" fill="#666">${esc(sub)}</text>`);
    const plotTop = y0 + titleH;
    const plotBottom = plotTop + pools.length * (barH + barGap) - barGap;
    // grid + ticks
    let lastLabelX = -Infinity;
    scale.ticks.forEach((t, k) => {
      const gx = barX + scale.map(t) * barW;
      out.push(
        `<line x1="${gx.toFixed(1)}" y1="${plotTop - 3}" x2="${gx.toFixed(1)}" ` +
          `y2="${plotBottom + 3}" stroke="#d5d5dc" stroke-width="1"/>`,
      );
      // a label too close to its neighbour is left out (the grid line stays);
      // the first tick gives way to the second
      const next = scale.ticks[k + 1];
      if (k === 0 && next !== undefined && barX + scale.map(next) * barW - gx < 30) return;
      if (gx - lastLabelX < 30) return;
      lastLabelX = gx;
      out.push(
        `<text x="${gx.toFixed(1)}" y="${plotBottom + 16}" font-size="10" fill="#666" ` +
          `text-anchor="middle">${esc(fmtTick(t))}</text>`,
      );
    });
    out.push(
      `<line x1="${barX}" y1="${plotTop - 3}" x2="${barX}" y2="${plotBottom + 3}" stroke="#999" stroke-width="1"/>`,
    );
    pools.forEach((p, i) => {
      const by = plotTop + i * (barH + barGap);
      const v = panel.values[p.key];
      out.push(
        `<text x="${barX - 8}" y="${by + barH / 2 + 4}" text-anchor="end" ` +
          `fill="#222"${p.bold ? ' font-weight="bold"' : ""}>${esc(p.label)}</text>`,
      );
      if (!Number.isFinite(v)) {
        const why = panel.missing?.[p.key] ?? "n/a";
        out.push(`<text x="${barX + 6}" y="${by + barH / 2 + 4}" fill="#a33" font-style="italic">${esc(why)}</text>`);
        return;
      }
      const w = Math.max(1.5, scale.map(v) * barW);
      out.push(
        `<rect x="${barX}" y="${by}" width="${w.toFixed(1)}" height="${barH}" rx="2" fill="${p.color}">` +
          `<title>${esc(`${p.label}: ${panel.fmt(v)}`)}</title></rect>`,
      );
      // The label goes right of the bar, or inside its end when it would run
      // out of the panel there.
      const text = panel.fmt(v);
      const tw = textWidth(text, 12) * (p.bold ? 1.08 : 1);
      const bold = p.bold ? ' font-weight="bold"' : "";
      if (barX + w + 5 + tw > x0 + panelW + 2 && w > tw + 10) {
        out.push(
          `<text x="${(barX + w - 5).toFixed(1)}" y="${by + barH / 2 + 4}" fill="#fff" ` +
            `text-anchor="end"${bold}>${esc(text)}</text>`,
        );
      } else {
        out.push(
          `<text x="${(barX + w + 5).toFixed(1)}" y="${by + barH / 2 + 4}" fill="#222"${bold}>${esc(text)}</text>`,
        );
      }
    });
    out.push(`</g>`);
  });
  out.push(`</svg>`);
  return out.join("\n") + "\n";
}
