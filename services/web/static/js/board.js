// Boards as SVG. A ply view from the API (board string of X/O/- per square, row 1 first;
// legal moves; last move; Gomoku's winning line) becomes one <svg>. Every square is a
// <g data-square data-stone> so a reader (or a test) can check the position drawn.

import { s } from "./dom.js";

const LETTERS = "abcdefghijklmnopqrstuvwxyz";
const STARS = {
  8: [[2, 2], [2, 6], [6, 2], [6, 6]],
  9: [[2, 2], [6, 2], [4, 4], [2, 6], [6, 6]],
  15: [[3, 3], [11, 3], [7, 7], [3, 11], [11, 11]],
  19: [3, 9, 15].flatMap((x) => [3, 9, 15].map((y) => [x, y])),
};

/**
 * @param view   a ply view: {board, legal, last, five, black, white, turn}
 * @param game   {kind: "othello"|"gomoku", size}
 * @param scores optional {square: score} drawn on the squares (the tree viewer), the
 *               highest marked when `best` is "max", the lowest when "min"
 */
export function renderBoard(view, game, { scores = null, best = "max", label = "" } = {}) {
  const othello = game.kind === "othello";
  const size = othello ? 8 : game.size;
  const geometry = othello ? othelloGeometry() : gomokuGeometry(size);
  const { total } = geometry;
  const svg = s("svg", {
    class: ["board", game.kind], viewBox: `0 0 ${total} ${total}`, role: "img",
    "aria-label": label || describe(view, othello), "data-ply": view.ply ?? "",
  });
  svg.append(s("rect", { class: "margin", x: 0, y: 0, width: total, height: total, rx: 8 }));
  drawFrame(svg, geometry, size, othello);
  drawCoordinates(svg, geometry, size);
  const legal = new Set(view.legal || []);
  const five = new Set(view.five || []);
  for (let square = 0; square < size * size; square++) {
    svg.append(drawSquare(geometry, square, size, view.board[square], {
      legal: legal.has(square), last: view.last === square, five: five.has(square),
      othello, score: scores ? scores[square] : undefined,
    }));
  }
  if (five.size >= 5) svg.append(fiveLine(geometry, size, [...five].sort((a, b) => a - b)));
  if (scores) markBest(svg, scores, best);
  return svg;
}

/** A square's name as the rules write it: its column's letter, its row's number ("d4"). */
export function squareName(square, size) {
  return `${LETTERS[square % size]}${Math.floor(square / size) + 1}`;
}

/** A ring around `square` (a keyboard's cursor), over everything drawn; moved there if
 *  `svg` has one already. */
export function showCursor(svg, square) {
  const box = svg.querySelector(`g[data-square="${square}"] > rect`);
  const ring = svg.querySelector("rect.cursor") || svg.appendChild(s("rect", { class: "cursor", rx: 3 }));
  for (const name of ["x", "y", "width", "height"]) ring.setAttribute(name, box.getAttribute(name));
}

function describe(view, othello) {
  const counts = othello ? `black ${view.black}, white ${view.white}` : `${view.black + view.white} stones`;
  const last = view.move ? `, last move ${view.move}` : "";
  return `Board at ply ${view.ply ?? 0}: ${counts}${last}`;
}

function othelloGeometry() {
  const margin = 22, cell = 48;
  return { margin, cell, total: margin * 2 + cell * 8,
    center: (i) => margin + i * cell + cell / 2, radius: cell * 0.41 };
}

function gomokuGeometry(size) {
  const cell = size <= 9 ? 44 : size <= 15 ? 30 : 26;
  const margin = 24;
  return { margin, cell, total: margin * 2 + cell * size,
    center: (i) => margin + cell / 2 + i * cell, radius: cell * 0.45 };
}

function drawFrame(svg, g, size, othello) {
  const kind = othello ? "othello" : "gomoku";
  svg.append(s("rect", { class: ["frame", kind], x: g.margin, y: g.margin,
    width: g.cell * size, height: g.cell * size, rx: othello ? 2 : 4 }));
  const lines = s("g", { class: ["grid", kind] });
  if (othello) {
    for (let i = 0; i <= size; i++) {
      const at = g.margin + i * g.cell, end = g.margin + size * g.cell;
      lines.append(s("line", { x1: at, y1: g.margin, x2: at, y2: end }));
      lines.append(s("line", { x1: g.margin, y1: at, x2: end, y2: at }));
    }
  } else {
    const first = g.center(0), last = g.center(size - 1);
    for (let i = 0; i < size; i++) {
      const at = g.center(i);
      lines.append(s("line", { x1: at, y1: first, x2: at, y2: last }));
      lines.append(s("line", { x1: first, y1: at, x2: last, y2: at }));
    }
  }
  svg.append(lines);
  for (const [x, y] of STARS[size] || []) {
    const cx = othello ? g.margin + x * g.cell : g.center(x);
    const cy = othello ? g.margin + y * g.cell : g.center(y);
    svg.append(s("circle", { class: ["star", kind], cx, cy, r: othello ? 3.5 : 3 }));
  }
}

function drawCoordinates(svg, g, size) {
  for (let i = 0; i < size; i++) {
    svg.append(s("text", { class: "coord", x: g.center(i), y: g.margin - 7, "text-anchor": "middle" },
      LETTERS[i]));
    svg.append(s("text", { class: "coord", x: g.margin / 2, y: g.center(i) + 4, "text-anchor": "middle" },
      String(i + 1)));
  }
}

function drawSquare(g, square, size, stone, mark) {
  const x = g.center(square % size), y = g.center(Math.floor(square / size));
  const group = s("g", { "data-square": square, "data-stone": stone || "-" });
  group.append(s("rect", { x: x - g.cell / 2, y: y - g.cell / 2, width: g.cell, height: g.cell,
    fill: "transparent" }));
  if (stone === "X" || stone === "O") {
    group.append(s("circle", { class: `stone-${stone}`, cx: x, cy: y, r: g.radius }));
    if (mark.five) group.append(s("circle", { class: "five", cx: x, cy: y, r: g.radius + 1.5 }));
    if (mark.last) group.append(s("circle", { class: "last", cx: x, cy: y, r: g.radius * 0.28 }));
  } else if (mark.legal && mark.score === undefined) {
    group.append(s("circle", { class: "legal", cx: x, cy: y, r: g.cell * 0.11 }));
    group.dataset.legal = "1";
  }
  if (mark.score !== undefined) {
    // The full figure stays in the square's tooltip (and the tree's list beside it).
    const text = shortScore(mark.score);
    group.append(s("title", {}, String(mark.score)),
      s("text", { class: "score-text", x, y, "data-score": mark.score,
        "font-size": Math.min(g.cell * 0.3, (g.cell * 0.85) / (GLYPH_EM * text.length)) }, text));
  }
  return group;
}

// Bold digits are about 0.62 em wide: a label of n characters at that size takes 85% of
// its square at most.
const GLYPH_EM = 0.62;
// Every engine scores a won game (from the root player's side) beyond this: 1,000,000
// less the plies to it in Gomoku, 1,000,000 (KReversi) or 1,000,000 plus 1,000 a disc
// (the other Othello evaluators); an evaluation stays far below it.
const DECIDED = 999_000;

/** A score short enough for a square: "win" or "loss" for a decided game, thousands as
 *  "12k" and millions as "1.2M"; a mark that is no number ("!") as it is. */
export function shortScore(score) {
  const n = Number(score);
  if (!Number.isFinite(n)) return String(score);
  if (Math.abs(n) > DECIDED) return n > 0 ? "win" : "loss";
  const sign = n < 0 ? "\u2212" : "", size = Math.abs(n);
  if (size < 1000) return sign + size;
  const [value, unit] = size < 1e6 ? [size / 1e3, "k"] : [size / 1e6, "M"];
  return sign + (value < 10 ? value.toFixed(1).replace(/\.0$/, "") : Math.round(value)) + unit;
}

function fiveLine(g, size, squares) {
  const point = (sq) => [g.center(sq % size), g.center(Math.floor(sq / size))];
  const [x1, y1] = point(squares[0]);
  const [x2, y2] = point(squares[squares.length - 1]);
  return s("line", { class: "five-line", x1, y1, x2, y2 });
}

function markBest(svg, scores, best) {
  // Scores are from the root player's point of view: a max node picks the highest.
  const values = Object.values(scores).map(Number).filter(Number.isFinite);
  if (!values.length) return;
  const target = best === "min" ? Math.min(...values) : Math.max(...values);
  for (const text of svg.querySelectorAll(".score-text")) {
    if (Number(text.dataset.score) === target) text.classList.add("best");
  }
}
