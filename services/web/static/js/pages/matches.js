// The match history with filters (ladder, bot, status, result, game), and a form for a
// new match. Filters live in the address's query, so a filtered list can be shared.

import { act, requestKeys } from "../actions.js";
import { getJSON, send, siteConfig } from "../api.js";
import { badge, h, ladderLink, matchLink, notice, pageOfRows, playerLink, replace, setTitle, timeCell } from "../dom.js";

const FILTERS = ["ladder", "bot", "status", "result", "game"];

/** The result of a match as a table cell: 1-0 / 0-1 / ½-½ with the way it ended. */
export function resultCell(match) {
  const result = match.result;
  if (!result) return h("td", {}, badge(match.status, match.status === "running" ? "live" : ""));
  if (result.void) return h("td", { title: result.detail || "" }, h("a", { href: `/matches/${encodeURIComponent(match.id)}` }, "void"));
  const score = result.score === "1/2-1/2" ? "\u00bd-\u00bd" : result.score;
  const how = result.termination === "normal" ? "" : ` ${result.termination}`;
  // The result links to the game too: on a phone the id column is hidden.
  return h("td", { class: "nowrap", title: result.detail || "" },
    h("a", { href: `/matches/${encodeURIComponent(match.id)}` }, h("strong", {}, score)),
    h("span", { class: "muted small" }, match.game.kind === "othello"
      ? ` ${result.black_count}-${result.white_count}${how}` : how));
}

export async function matchList(main) {
  setTitle("Matches");
  const params = new URLSearchParams(location.search);
  const inputs = {
    ladder: h("input", { name: "ladder", placeholder: "ladder id", value: params.get("ladder") || "" }),
    bot: h("input", { name: "bot", placeholder: "name or name@version", value: params.get("bot") || "" }),
    status: select("status", ["", "pending", "running", "finished", "cancelled"], params.get("status")),
    result: select("result", ["", "black", "white", "draw", "forfeit", "win", "loss"], params.get("result")),
    game: select("game", ["", "othello", "gomoku"], params.get("game")),
  };
  const list = h("div", { class: "card" });
  const form = h("div");
  const filterForm = h("form", { class: "card", onsubmit: (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const key of FILTERS) if (inputs[key].value.trim()) query.set(key, inputs[key].value.trim());
    history.replaceState(null, "", `/matches${query.toString() ? `?${query}` : ""}`);
    load(list, query, true);
  } },
  h("div", { class: "form-grid" },
    h("label", {}, "Ladder", inputs.ladder), h("label", {}, "Bot", inputs.bot),
    h("label", {}, "Status", inputs.status),
    h("label", { title: "win and loss are the named bot's" }, "Result", inputs.result),
    h("label", {}, "Game", inputs.game),
    h("button", { type: "submit", class: "primary" }, "Filter")));
  replace(main,
    h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Matches"), h("div", { class: "meta" }, "Every game played, newest first.")),
      h("button", { class: "primary", onclick: () => toggleForm(form) }, "New match")),
    form, filterForm, list);
  const query = new URLSearchParams();
  for (const key of FILTERS) if (params.get(key)) query.set(key, params.get(key));
  await load(list, query, true);
}

function select(name, values, current) {
  return h("select", { name }, values.map((value) =>
    h("option", { value, selected: value === (current || "") }, value || "any")));
}

async function load(container, query, fresh, token = "") {
  const page = new URLSearchParams(query);
  page.set("limit", "50");
  if (token) page.set("page_token", token);
  let data;
  try {
    data = await getJSON(`/api/matches?${page}`);
  } catch (error) {
    replace(container, notice(error.describe ? error.describe() : String(error), "error"));
    return;
  }
  const rows = data.matches.map((m) => h("tr", { "data-match": m.id },
    h("td", { class: "hide-narrow" }, matchLink(m.id)),
    h("td", { class: "hide-narrow" }, m.game.kind === "othello" ? "Othello" : `Gomoku ${m.game.size}`),
    h("td", { class: "name" }, playerLink(m, m.black)), h("td", { class: "name" }, playerLink(m, m.white)),
    resultCell(m),
    h("td", { class: "hide-narrow" }, m.ladder_id ? ladderLink(m.ladder_id, m.ladder_name) : ""),
    h("td", { class: "hide-narrow nowrap" }, timeCell(m.created_at))));
  pageOfRows(container, {
    first: fresh, rows, empty: "No matches found.", nextToken: data.next_page_token,
    more: (next) => load(container, query, false, next),
    note: h("span", { class: "muted small" }, `${data.scanned} matches read for this page`),
    headers: [{ text: "Match", attrs: { class: "hide-narrow" } }, { text: "Game", attrs: { class: "hide-narrow" } }, "Black", "White", "Result",
      { text: "Ladder", attrs: { class: "hide-narrow" } }, { text: "Created", attrs: { class: "hide-narrow" } }],
  });
}

/** The game, variant and board selects both new-match and new-ladder forms share, from
 *  the rules (/api/config's games): the variant and board follow the game chosen; a
 *  variant left at "" is the service's to fill in (an opening suite's, or the game's).
 *  `onGame` is told of a new game. */
export async function gameSelects(onGame = () => {}) {
  const { games } = await siteConfig();
  const game = h("select", { name: "game" }, Object.entries(games).map(([name, g]) => h("option", { value: name }, g.title)));
  const variant = h("select", { name: "variant" }), size = h("select", { name: "size" });
  const fill = () => {
    const rules = games[game.value];
    replace(variant, h("option", { value: "" }, "default"), rules.variants.map((v) => h("option", { value: v }, v)));
    replace(size, rules.sizes.map((n) => h("option", { value: n, selected: n === rules.default_size }, `${n}\u00d7${n}`)));
    size.disabled = rules.sizes.length < 2;
  };
  game.addEventListener("change", () => { fill(); onGame(); });
  fill();
  return { game, variant, size };
}

/** The field both new-match and new-ladder forms share: the exact solver's adjudication. */
export const ADJUDICATE_LABEL = "Adjudicate at N empties (0: never)";
const ADJUDICATE_TITLE = "Othello, up to 18: at N empty squares or fewer the referee solves the position and the game ends with perfect play's result";
/** The forms' adjudication input (MatchConfig / LadderConfig adjudicate_empties). */
export const adjudicateInput = () => h("input", { name: "adjudicate_empties", type: "number", min: 0, max: 18,
  value: 0, title: ADJUDICATE_TITLE });

async function toggleForm(container) {
  if (container.firstChild) { replace(container); return; }
  const message = h("div");
  const keyOf = requestKeys();
  const bots = await getJSON("/api/bots?limit=200");
  const options = h("datalist", { id: "bot-names" }, bots.bots.map((b) => h("option", { value: b.name })));
  const inputs = {
    black: h("input", { name: "black", list: "bot-names", required: true }),
    white: h("input", { name: "white", list: "bot-names", required: true }),
    ...await gameSelects(),
    time: h("input", { name: "move_time_ms", type: "number", min: 1, value: 1000 }),
    gameTime: h("input", { name: "game_time_ms", type: "number", min: 0, value: 0 }),
    increment: h("input", { name: "increment_ms", type: "number", min: 0, value: 0 }),
    opening: h("input", { name: "opening", placeholder: "e.g. f5 d6" }),
    seed: h("input", { name: "seed", type: "number", min: 0, value: 0 }),
    trees: h("input", { name: "capture_trees", type: "checkbox" }),
    adjudicate: adjudicateInput(),
  };
  async function submit(event) {
    event.preventDefault();
    const body = { black: inputs.black.value.trim(), white: inputs.white.value.trim(), game: inputs.game.value,
      variant: inputs.variant.value, size: Number(inputs.size.value), move_time_ms: Number(inputs.time.value),
      game_time_ms: Number(inputs.gameTime.value), increment_ms: Number(inputs.increment.value),
      opening: inputs.opening.value, seed: Number(inputs.seed.value), capture_trees: inputs.trees.checked,
      adjudicate_empties: Number(inputs.adjudicate.value) };
    body.request_id = keyOf(body);
    try {
      const match = await act(() => send("POST", "/api/matches", body));
      if (match) location.href = `/matches/${encodeURIComponent(match.id)}`;
    } catch (error) {
      replace(message, notice(error.describe ? error.describe() : String(error), "error"));
    }
  }
  replace(container, h("form", { class: "card", onsubmit: submit }, h("h2", {}, "New match"), options,
    h("div", { class: "form-grid" },
      h("label", {}, "Black (bot)", inputs.black), h("label", {}, "White (bot)", inputs.white),
      h("label", {}, "Game", inputs.game), h("label", {}, "Variant (Gomoku: rule)", inputs.variant),
      h("label", {}, "Board", inputs.size),
      h("label", {}, "Move time (ms)", inputs.time),
      h("label", {}, "Game time per side (ms, 0: none)", inputs.gameTime),
      h("label", {}, "Increment per move (ms)", inputs.increment), h("label", {}, "Opening moves", inputs.opening),
      h("label", {}, "Seed", inputs.seed), h("label", {}, ADJUDICATE_LABEL, inputs.adjudicate),
      h("label", { class: "check" }, inputs.trees, "Store search trees")),
    message, h("div", { class: "row" }, h("button", { class: "primary", type: "submit" }, "Start match"),
      h("span", { class: "muted small" }, "Created as you, with your token."))));
}
