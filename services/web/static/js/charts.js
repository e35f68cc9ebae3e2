// Small SVG charts: Elo with its 95% interval per bot, and 8x8 heat maps of KReversi's
// position tables (as its bot creator shows them, a number on every square).

import { s, signed } from "./dom.js";

const LETTERS = "abcdefgh";

/** Elo points with interval bars, one row per bot, best first. */
export function eloChart(allRows, width = 640) {
  // A bot without games has no rating yet (null): it waits for its first result.
  const rows = allRows.filter((r) => [r.elo, r.elo_low, r.elo_high].every(Number.isFinite));
  const labelWidth = Math.min(150, Math.round(width * 0.36)), right = 24, rowHeight = 30, top = 10, axisHeight = 26;
  const labelChars = Math.max(8, Math.floor(labelWidth / 7.5));
  const height = top + rows.length * rowHeight + axisHeight;
  const lows = rows.map((r) => r.elo_low), highs = rows.map((r) => r.elo_high);
  let min = Math.min(0, ...lows), max = Math.max(0, ...highs);
  if (max - min < 100) { const mid = (max + min) / 2; min = mid - 50; max = mid + 50; }
  const step = niceStep((max - min) / (width < 480 ? 4 : 6));
  min = Math.floor(min / step) * step;
  max = Math.ceil(max / step) * step;
  const x = (v) => labelWidth + ((v - min) / (max - min)) * (width - labelWidth - right);
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, role: "img",
    "aria-label": "Elo ratings with 95% intervals" });
  const bottom = top + rows.length * rowHeight;
  for (let v = min; v <= max + 1e-9; v += step) {
    svg.append(s("line", { class: v === 0 ? "zero" : "axis", x1: x(v), x2: x(v), y1: top, y2: bottom }));
    svg.append(s("text", { class: "tick", x: x(v), y: bottom + 16, "text-anchor": "middle" }, signed(v)));
  }
  rows.forEach((row, i) => {
    const y = top + i * rowHeight + rowHeight / 2;
    svg.append(s("text", { class: "label", x: labelWidth - 10, y: y + 4, "text-anchor": "end" }, clip(row.bot, labelChars)));
    svg.append(s("line", { class: "interval", x1: x(row.elo_low), x2: x(row.elo_high), y1: y, y2: y }));
    const point = s("circle", { class: "point", cx: x(row.elo), cy: y, r: 5 });
    point.append(s("title", {}, `${row.bot}: ${signed(row.elo)} [${signed(row.elo_low)}, ${signed(row.elo_high)}]`));
    svg.append(point);
  });
  return svg;
}

function niceStep(raw) {
  const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-9)));
  for (const factor of [1, 2, 2.5, 5, 10]) if (factor * power >= raw) return factor * power;
  return 10 * power;
}

function clip(text, length) {
  return text.length > length ? `${text.slice(0, length - 1)}\u2026` : text;
}

/** An 8x8 table (row 0 = a1..h1) as a heat map; `scale` is the value of full colour. */
export function heatMap(table, scale, caption) {
  const cell = 30, margin = 14, size = margin + cell * 8;
  const svg = s("svg", { class: "heat", viewBox: `0 0 ${size} ${size}`, role: "img", "aria-label": caption });
  for (let c = 0; c < 8; c++) {
    svg.append(s("text", { class: "coord", x: margin + c * cell + cell / 2, y: 10, "text-anchor": "middle" }, LETTERS[c]));
  }
  table.forEach((row, r) => {
    svg.append(s("text", { class: "coord", x: 5, y: margin + r * cell + cell / 2 + 3, "text-anchor": "middle" }, String(r + 1)));
    row.forEach((value, c) => {
      const x = margin + c * cell, y = margin + r * cell;
      svg.append(s("rect", { class: "cell-bg", x, y, width: cell - 1, height: cell - 1, rx: 2 }));
      const strength = Math.min(1, Math.abs(value) / (scale || 1));
      const tint = s("rect", { x, y, width: cell - 1, height: cell - 1, rx: 2,
        "fill-opacity": (0.08 + 0.72 * strength).toFixed(3), "data-value": value });
      // The theme's colour, through CSSOM (the CSP allows it; a style attribute it would not).
      tint.style.fill = value >= 0 ? "var(--heat-pos)" : "var(--heat-neg)";
      tint.append(s("title", {}, `${LETTERS[c]}${r + 1}: ${value}`));
      svg.append(tint);
      svg.append(s("text", { class: "cell-text", x: x + (cell - 1) / 2, y: y + cell / 2 + 3.5, "text-anchor": "middle" }, String(value)));
    });
  });
  return svg;
}
