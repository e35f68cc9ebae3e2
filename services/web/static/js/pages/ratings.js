// The arena's rating list: every ladder game of one game (variant and board size), pooled
// into one Elo fit, at every clock or at one; bots no games connect are shown as separate
// pools.

import { getJSON } from "../api.js";
import { eloChart } from "../charts.js";
import { h, int, replace, setTitle } from "../dom.js";
import { CLOCK_PARTS, clockQuery, clockText, gameText, standingsTable } from "./ladders.js";

// The games a list can be asked for, as the address's query names them.
const CHOICES = [
  { game: "othello", variant: "standard", size: 8 },
  { game: "othello", variant: "international", size: 8 },
  { game: "gomoku", variant: "freestyle", size: 15 },
  { game: "gomoku", variant: "exact-five", size: 15 },
  { game: "gomoku", variant: "freestyle", size: 19 },
  { game: "gomoku", variant: "freestyle", size: 9 },
];

const query = (c) => `game=${c.game}&variant=${c.variant}&size=${c.size}`;

export async function ratingList(main) {
  const asked = new URLSearchParams(location.search);
  const wanted = { game: asked.get("game") || "othello", variant: asked.get("variant") || "", size: asked.get("size") || "" };
  const path = `/api/ratings?game=${encodeURIComponent(wanted.game)}`
    + (wanted.variant ? `&variant=${encodeURIComponent(wanted.variant)}` : "")
    + (wanted.size ? `&size=${encodeURIComponent(wanted.size)}` : "")
    + CLOCK_PARTS.filter((part) => asked.has(part))
      .map((part) => `&${part}=${encodeURIComponent(asked.get(part))}`).join("");
  const data = await getJSON(path);
  const title = `Ratings: ${gameText(data.game)}${data.clock ? ` at ${clockText(data.clock)}` : ""}`;
  setTitle(title);
  const shown = { game: data.game.kind, variant: data.game.variant, size: data.game.size };
  const button = (current, href, text, testid) => h("a", { class: current ? "button primary" : "button",
    href, "aria-current": current ? "page" : null, "data-testid": testid }, text);
  const picks = h("nav", { class: "row game-picks", "aria-label": "Game" }, CHOICES.map((c) =>
    button(query(c) === query(shown), `/ratings?${query(c)}`,
      gameText({ kind: c.game, variant: c.variant, size: c.size }), null)));
  const list = `/ratings?${query(shown)}`;
  const clocks = h("nav", { class: "row game-picks", "aria-label": "Clock" },
    button(!data.clock, list, "Every clock", "clock-all"),
    data.clocks.map((c) => button(data.clock && clockQuery(c) === clockQuery(data.clock),
      list + clockQuery(c), `${clockText(c)} (${int(c.games)} games)`, "clock-pick")));
  const ladders = `${int(data.ladders)} ladder${data.ladders === 1 ? "" : "s"}`;
  const head = h("div", { class: "page-head" }, h("div", {}, h("h1", {}, title),
    h("div", { class: "meta" }, h("span", { "data-testid": "rated-games" }, `${int(data.games)} games from ${ladders}`),
      h("span", {}, data.clock ? "the counted games of ladders at this clock, one Elo fit"
        : "every counted ladder game at every clock, one Elo fit"))));
  if (!data.rows.length) {
    replace(main, head, picks, clocks, h("div", { class: "card" }, h("p", { class: "empty" },
      data.clock ? "No rated games at this clock: the games of its ladders are rated here as they finish."
        : "No rated games of this game yet: the games of its ladders are rated here as they finish.")));
    return;
  }
  const pools = [];
  for (let pool = 1; pool <= data.pools; pool++) {
    const rows = data.rows.filter((row) => row.pool === pool);
    const card = h("section", { class: "card", "data-pool": String(pool) },
      h("h2", {}, data.pools > 1 ? `Pool ${pool}` : "Ratings"),
      data.pools > 1 ? h("p", { class: "muted small" }, "No games connect this pool's bots with another pool's: their ratings are not comparable.") : null,
      standingsTable(rows));
    pools.push(card);
  }
  const chart = h("div", { class: "card" });
  replace(main, head, picks, clocks, ...pools, chart);
  const width = Math.max(300, chart.clientWidth - 36);
  replace(chart, h("h2", {}, data.pools > 1 ? "Elo with 95% intervals (pool 1)" : "Elo with 95% intervals"),
    eloChart(data.rows.filter((row) => row.pool === 1), width));
}
