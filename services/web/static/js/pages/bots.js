// Bots: the list, and one bot's page: avatar, versions, its configuration shown as the
// seeds' bot creators show it (KReversi's phase tables as 8x8 heat maps, depths and
// weights per phase), its places in the arena's rating lists, its recent games and its
// results by opponent.

import { imageURL, getJSON } from "../api.js";
import { heatMap } from "../charts.js";
import { badge, botLink, h, int, matchLink, pageOfRows, pct, replace, setTitle, signed, table, timeCell } from "../dom.js";
import { clockQuery, clockText, gameText } from "./ladders.js";
import { resultCell } from "./matches.js";

const PHASES = [["begin", "Opening (up to 20 discs)"], ["middle", "Middle game (21 to 40)"], ["end", "Endgame (41+)"]];
const LAB_LEVELS = { 0: "Beginner", 1: "Intermediate", 3: "Advanced" };
const SHARPMOKU_LEVELS = { 2: "Normal", 4: "Hard" };

function avatar(bot, small = false) {
  const initial = (bot.name.trim()[0] || "?").toUpperCase();
  const holder = h("span", { class: ["avatar", small && "small", "placeholder"], "aria-hidden": "true" }, initial);
  if (bot.has_avatar) {
    const version = bot.version ? `?version=${bot.version}` : "";
    imageURL(`/api/avatars/${encodeURIComponent(bot.name)}${version}`).then((url) => {
      if (!url) return;
      holder.replaceWith(h("img", { class: ["avatar", small && "small"], src: url, alt: `${bot.name}'s avatar` }));
    });
  }
  return holder;
}

function engineText(bot) {
  if (bot.engine === "external") return "external (gRPC)";
  if (bot.engine === "protocol") return `protocol engine ${bot.protocol.engine}`;
  return [bot.evaluator || "builtin", bot.preset && `from ${bot.preset}`].filter(Boolean).join(", ");
}

export async function botList(main) {
  setTitle("Bots");
  const params = new URLSearchParams(location.search);
  const prefix = h("input", { name: "prefix", placeholder: "name starts with", value: params.get("prefix") || "" });
  const game = h("select", { name: "game" }, ["", "othello", "gomoku"].map((g) =>
    h("option", { value: g, selected: g === (params.get("game") || "") }, g || "any game")));
  const retired = h("input", { type: "checkbox", name: "retired", checked: params.get("retired") === "1" });
  const list = h("div", { class: "card" });
  const filters = h("form", { class: "card", onsubmit: (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    if (prefix.value) query.set("prefix", prefix.value);
    if (game.value) query.set("game", game.value);
    if (retired.checked) query.set("retired", "1");
    history.replaceState(null, "", `/bots${query.toString() ? `?${query}` : ""}`);
    load(list, query);
  } }, h("div", { class: "form-grid" }, h("label", {}, "Name", prefix), h("label", {}, "Game", game),
    h("label", { class: "check" }, retired, "Show retired"), h("button", { class: "primary", type: "submit" }, "Filter")));
  replace(main, h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Bots"),
    h("p", { class: "muted" }, "Registered bot configurations; every version is kept. Register with ",
      h("code", {}, "arena bot register"), "."))), filters, list);
  // Only the list's own filters: the API refuses a parameter it does not take, and a link
  // may carry others (a share button's `fbclid`, a campaign's `utm_source`).
  const query = new URLSearchParams();
  for (const key of ["prefix", "game", "retired"]) if (params.get(key)) query.set(key, params.get(key));
  await load(list, query);
}

async function load(container, query, token = "") {
  const page = new URLSearchParams(query);
  page.set("limit", "200");
  if (token) page.set("page_token", token);
  const data = await getJSON(`/api/bots?${page}`);
  const rows = data.bots.map((bot) => h("tr", { "data-bot": bot.name },
    h("td", {}, avatar(bot, true)),
    h("td", { class: "name" }, botLink(bot.name), bot.retired ? [" ", badge("retired")] : null),
    h("td", {}, bot.game), h("td", { class: "hide-narrow" }, engineText(bot)),
    h("td", { class: "num" }, `v${bot.version}`), h("td", { class: "hide-narrow" }, bot.owner),
    h("td", { class: "hide-narrow name muted" }, bot.description)));
  // A page holds 200 bots: the rest come a page at a time (they were left out unsaid).
  pageOfRows(container, {
    first: !token, rows, empty: "No bots match.", nextToken: data.next_page_token,
    more: (next) => load(container, query, next),
    headers: ["", "Bot", "Game", { text: "Engine", attrs: { class: "hide-narrow" } }, { text: "Version", attrs: { class: "num" } },
      { text: "Owner", attrs: { class: "hide-narrow" } }, { text: "Description", attrs: { class: "hide-narrow" } }],
  });
}

export async function botPage(main, name) {
  const version = new URLSearchParams(location.search).get("version");
  const bot = await getJSON(`/api/bots/${encodeURIComponent(name)}${version ? `?version=${encodeURIComponent(version)}` : ""}`);
  setTitle(bot.name);
  const latest = bot.version === bot.latest_version;
  replace(main,
    h("div", { class: "card bot-head" }, avatar(bot),
      h("div", { class: "grow" },
        h("h1", {}, bot.name, " ", h("span", { class: "muted" }, `v${bot.version}`), bot.retired ? [" ", badge("retired")] : null),
        h("div", { class: "page-head meta" },
          h("span", {}, bot.game), h("span", {}, engineText(bot)), h("span", {}, `by ${bot.owner || "?"}`),
          h("span", {}, "registered ", timeCell(bot.created_at)),
          latest ? null : h("a", { href: `/bots/${encodeURIComponent(bot.name)}` }, `latest is v${bot.latest_version}`)),
        bot.description ? h("p", { class: "description" }, bot.description) : null)),
    h("div", { class: "card" }, h("h2", {}, "Configuration"), configView(bot)),
    h("div", { class: "card" }, h("h2", {}, "Arena ratings"), ratings(bot)),
    h("div", { class: "grid-2" },
      h("div", { class: "card" }, h("h2", {}, "Results by opponent"), opponents(bot)),
      h("div", { class: "card" }, h("h2", {}, "Versions"), versions(bot))),
    h("div", { class: "card" }, h("h2", {}, "Recent games"), recent(bot)));
}

// -- configuration ----------------------------------------------------------------------------

function configView(bot) {
  const config = bot.config || {};
  if (bot.engine === "external") {
    return facts([["Address", h("code", {}, bot.external.address)],
      ["Own deadline", bot.external.move_deadline_ms ? `${int(bot.external.move_deadline_ms)} ms` : "the match's limit"]]);
  }
  if (bot.engine === "protocol") {
    const options = Object.entries(bot.protocol.options).map(([key, value]) => `${key} = ${JSON.stringify(value)}`);
    return facts([["Engine", [h("code", {}, bot.protocol.engine), " from the workers' engine catalog (",
      h("code", {}, "arena engine list"), ")"]],
    ["Checksum", h("code", { title: bot.protocol.checksum }, bot.protocol.checksum.slice(0, 12))],
    ["Options", options.length ? h("code", {}, options.join(", ")) : "the catalog's"]]);
  }
  switch (bot.evaluator) {
    case "kreversi": return kreversi(config);
    case "arena": return arenaOthello(config);
    case "lab": return facts([["Level", `${LAB_LEVELS[config.look_ahead ?? 1] || "custom"} (look-ahead ${config.look_ahead ?? 1})`],
      ["Evaluation", "corners 100, edges 10, inner squares 1 (the Reversi lab's EvaluateTest)"]]);
    case "sharpmoku": return facts([["Level", `${SHARPMOKU_LEVELS[config.depth ?? 2] || "custom"} (depth ${config.depth ?? 2})`],
      ["Evaluation", "SharpMoku's line patterns"]]);
    default: return generic(config);
  }
}

function facts(pairs) {
  return h("dl", { class: "kv" }, pairs.map(([key, value]) => [h("dt", {}, key), h("dd", {}, value)]));
}

function generic(config) {
  const pairs = Object.entries(config).map(([key, value]) => [key, typeof value === "object" ? JSON.stringify(value) : String(value)]);
  return pairs.length ? facts(pairs) : h("p", { class: "muted" }, "The engine's defaults.");
}

function kreversi(config) {
  const tables = config.position_tables || {};
  const values = PHASES.flatMap(([phase]) => (tables[phase] || []).flat());
  const scale = Math.max(1, ...values.map(Math.abs));
  const perPhase = (key) => PHASES.map(([phase]) => h("td", { class: "num" }, String(config[key]?.[phase] ?? "\u2014")));
  const use = config.use_position_table !== false;
  return h("div", { class: "stack" },
    h("div", { class: "table-wrap" }, h("table", { class: "phases" },
      h("thead", {}, h("tr", {}, h("th", {}, ""), PHASES.map(([, label]) => h("th", { class: "num" }, label.split(" (")[0])))),
      h("tbody", {},
        h("tr", {}, h("th", {}, "Depth"), perPhase("depth")),
        h("tr", {}, h("th", {}, "Mobility weight"), perPhase("mobility"))))),
    facts([
      ["Stable disc score", String(config.stable_disc_score ?? "\u2014")],
      ["Force pass score", String(config.force_pass_score ?? "\u2014")],
      ["Time limit", config.time_limit_s ? `${config.time_limit_s} s per move` : "\u2014"],
      ["Position tables", use ? "scored" : "not scored"],
      ["Mobility counts", config.mobility_counts_flips ? "discs each move flips (KReversi's code)" : "legal moves"],
      ["Random tied moves", config.random_tied_root_moves === false ? "no" : "yes, up to 14 discs"],
    ]),
    h("h3", {}, `Position tables${use ? "" : " (not used)"}`),
    h("div", { class: "heatmaps" }, PHASES.map(([phase, label]) => tables[phase]
      ? h("figure", { class: "heatmap", "data-phase": phase }, h("figcaption", {}, label), heatMap(tables[phase], scale, `${label} position table`))
      : h("p", { class: "muted" }, `${label}: the default table`))));
}

function arenaOthello(config) {
  const weights = config.weights || {};
  const scale = Math.max(1, ...Object.values(weights).flat().map(Math.abs));
  const bar = (value) => {
    const span = h("span", { class: ["bar", value < 0 && "neg"] });
    span.style.width = `${Math.round((Math.abs(value) / scale) * 80)}px`;
    return span;
  };
  const rows = Object.entries(weights).map(([term, pair]) => h("tr", {},
    h("td", {}, term.replaceAll("_", " ")),
    h("td", { class: "num" }, String(pair[0])), h("td", {}, bar(pair[0])),
    h("td", { class: "num" }, String(pair[1])), h("td", {}, bar(pair[1]))));
  return h("div", { class: "stack" },
    facts([["Depth", `${config.depth ?? "\u2014"} plies`], ["Time", config.time_ms ? `${int(config.time_ms)} ms per move` : "\u2014"],
      ["Exact endgame", config.endgame_empties !== undefined ? `at ${config.endgame_empties} empty squares or fewer` : "\u2014"]]),
    rows.length ? table(["Term", { text: "Opening", attrs: { class: "num" } }, "", { text: "Endgame", attrs: { class: "num" } }, ""], rows)
      : h("p", { class: "muted" }, "Default weights."));
}

// -- ratings -------------------------------------------------------------------------------

function ratings(bot) {
  if (!bot.ratings.length) {
    return h("p", { class: "empty" }, "Not rated yet: the games of its ladders rate it in the ",
      h("a", { href: `/ratings?game=${bot.game}` }, "rating list"), ".");
  }
  const rows = bot.ratings.map((line) => {
    const clock = line.clock ? clockQuery(line.clock) : "";
    const list = `/ratings?game=${line.game.kind}&variant=${line.game.variant}&size=${line.game.size}${clock}`;
    return h("tr", { "data-bot": line.bot },
      h("td", {}, h("a", { href: list }, gameText(line.game) + (line.clock ? ` at ${clockText(line.clock)}` : ""))),
      h("td", { class: "name" }, botLink(line.bot)),
      h("td", { class: "num", "data-field": "rank" }, `${line.rank} of ${line.of}`),
      h("td", { class: "num", "data-field": "elo" }, signed(line.elo)),
      h("td", { class: "num hide-narrow" }, `[${signed(line.elo_low)}, ${signed(line.elo_high)}]`),
      h("td", { class: "num" }, String(line.games)), h("td", { class: "num" }, pct(line.score_pct)));
  });
  return [table(["List", "Version", { text: "Rank", attrs: { class: "num" } }, { text: "Elo", attrs: { class: "num" } },
    { text: "95% interval", attrs: { class: "num hide-narrow" } }, { text: "Games", attrs: { class: "num" } },
    { text: "Score", attrs: { class: "num" } }], rows),
  h("p", { class: "muted small" }, "Every counted ladder game of the game, one Elo fit (at every clock, and at each where its ladders had several); a rank counts within the bot's pool.")];
}

// -- record -------------------------------------------------------------------------------------

function opponents(bot) {
  if (!bot.by_opponent.length) return h("p", { class: "empty" }, "No finished games yet.");
  const rows = bot.by_opponent.map((line) => h("tr", {},
    h("td", { class: "name" }, botLink(line.opponent)), h("td", { class: "num" }, String(line.games)),
    h("td", { class: "num win" }, String(line.wins)), h("td", { class: "num draw" }, String(line.draws)),
    h("td", { class: "num loss" }, String(line.losses)),
    h("td", { class: "num" }, pct(100 * (line.wins + line.draws / 2) / line.games))));
  return [table(["Opponent", { text: "Games", attrs: { class: "num" } }, { text: "W", attrs: { class: "num" } },
    { text: "D", attrs: { class: "num" } }, { text: "L", attrs: { class: "num" } }, { text: "Score", attrs: { class: "num" } }], rows),
  h("p", { class: "muted small" }, `From the ${bot.games_counted} most recent games.`)];
}

function versions(bot) {
  const rows = bot.versions.map((v) => h("tr", { class: v.version === bot.version ? "current" : "" },
    h("td", {}, h("a", { href: `/bots/${encodeURIComponent(bot.name)}?version=${v.version}` }, `v${v.version}`)),
    h("td", { class: "nowrap" }, timeCell(v.created_at)), h("td", {}, v.preset || "\u2014"),
    h("td", { class: "mono small", title: v.evaluator_hash }, v.evaluator_hash.slice(0, 10))));
  return table(["Version", "Registered", "Preset", "Evaluator hash"], rows);
}

function recent(bot) {
  if (!bot.recent.length) return h("p", { class: "empty" }, "No games yet.");
  const rows = bot.recent.map((m) => {
    const black = m.black.replace(/@\d+$/, "") === bot.name;
    const opponent = black ? m.white : m.black;
    return h("tr", {}, h("td", { class: "hide-narrow" }, matchLink(m.id)), h("td", {}, black ? "black" : "white"),
      h("td", { class: "name" }, botLink(opponent)), outcome(m, black ? "black" : "white"), resultCell(m),
      h("td", { class: "hide-narrow nowrap" }, timeCell(m.created_at)));
  });
  return table([{ text: "Match", attrs: { class: "hide-narrow" } }, "Colour", "Opponent", "Outcome", "Result", { text: "When", attrs: { class: "hide-narrow" } }], rows);
}

function outcome(match, side) {
  if (!match.result) return h("td", { class: "muted" }, match.status);
  if (match.result.void) return h("td", { class: "muted" }, "void");
  if (!match.result.winner) return h("td", { class: "draw" }, "draw");
  return match.result.winner === side ? h("td", { class: "win" }, "win") : h("td", { class: "loss" }, "loss");
}
