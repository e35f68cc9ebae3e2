// Ladders: the list (with a form for a new one) and one ladder's page: standings, the
// Elo chart, the head-to-head matrix, its games, and live progress while it runs.

import { act, requestKeys } from "../actions.js";
import { SHARED_ANSWER_MS, getJSON, liveStateText, send, stream } from "../api.js";
import { eloChart } from "../charts.js";
import {
  ago, badge, botLink, duration, h, int, ladderLink, matchLink, notice, pageOfRows, pct,
  progressBar, replace, setTitle, shortId, signed, table, timeCell,
} from "../dom.js";
import { ADJUDICATE_LABEL, adjudicateInput, gameSelects, resultCell } from "./matches.js";

// A suite by its name; a ladder's own openings by their count (listed under the head).
function openingsText(ladder) {
  const count = ladder.openings_count;
  if (!count) return h("span", {}, `openings: ${ladder.opening_suite || "none"}`);
  return h("span", { "data-testid": "own-openings" },
    `openings: its own (${count} opening${count === 1 ? "" : "s"})`);
}

// A ladder's own openings, each by its moves (they showed only in a tooltip).
function openingsList(ladder) {
  if (!ladder.openings?.length) return null;
  return h("ol", { class: "openings-list", "aria-label": "The ladder's own openings",
    "data-testid": "own-openings-list" }, ladder.openings.map((moves) => h("li", {}, moves)));
}

// The form's openings of its own: a line each, '#' comments and '|' notes aside (as the
// CLI's --openings-file reads them); none: the suite's.
function ownOpenings(text) {
  return text.split("\n").map((line) => line.split("#")[0].split("|")[0].trim())
    .filter((line) => line);
}

// "": the game's own (othello-balanced; gomoku-balanced15 on 15x15), as the CLI leaves it.
const SUITES = [["", "the game's own"], "othello-balanced", "international", "gomoku-balanced15",
  "gomoku-wide15", "none"].map((s) => (Array.isArray(s) ? s : [s, s]));
const GAMES_PAGE = 50; // a ladder page's games a page (the match list's page)

export async function ladderList(main) {
  setTitle("Ladders");
  const list = h("div", { class: "card" }, h("p", { class: "muted" }, "Loading ladders\u2026"));
  const live = h("div");
  const form = h("div");
  replace(main,
    h("div", { class: "page-head" },
      h("div", {}, h("h1", {}, "Ladders"), h("div", { class: "meta" }, "Round robins and gauntlets between bots, with Elo ratings.")),
      h("div", { class: "row" }, runningToggle(list),
        h("button", { class: "primary", onclick: () => toggleForm(form) }, "New ladder"))),
    form, live, list);
  await Promise.all([refreshList(list), showLiveMatches(live)]);
}

/** Ladders a page of the list: the address's ``limit`` (1..200), else 100. */
function laddersPage() {
  const asked = Number(new URLSearchParams(location.search).get("limit"));
  return Number.isInteger(asked) && asked >= 1 && asked <= 200 ? asked : 100;
}

/** Whether the list shows the running ladders only: the address's ``running=1``. */
function runningOnly() {
  return new URLSearchParams(location.search).get("running") === "1";
}

/** The list's "Running only" box: kept in the address, so that a reload or a link keeps
 * it; the list is read anew from its first page. Made once, outside the list its poll
 * draws anew, so that it keeps the keyboard's focus. */
function runningToggle(container) {
  const box = h("input", { type: "checkbox", name: "running", checked: runningOnly(), onchange: () => {
    const params = new URLSearchParams(location.search);
    if (box.checked) params.set("running", "1"); else params.delete("running");
    history.replaceState(null, "", `/ladders${params.toString() ? `?${params}` : ""}`);
    refreshList(container).catch(() => {});
  } });
  return h("label", { class: "check" }, box, "Running only");
}

/** The list's first ``pages`` pages of ladders, newest first, then "Load more" while more
 * follow; polled lightly while any shown runs (the pages shown are read again). After
 * "Load more" (``focusRow``: the first new row) the keyboard's focus goes to the first new
 * ladder: the list is drawn anew, and it fell back to the top of the page. */
async function refreshList(container, pages = 1, focusRow = -1) {
  const ladders = [];
  let token = "", read = 0;
  do {
    const query = new URLSearchParams({ limit: String(laddersPage()) });
    if (runningOnly()) query.set("running", "1");
    if (token) query.set("page_token", token);
    const data = await getJSON(`/api/ladders?${query}`);
    ladders.push(...data.ladders);
    token = data.next_page_token;
    read += 1;
  } while (token && read < pages);
  const head = h("h2", {}, runningOnly() ? "Running ladders" : "All ladders");
  clearTimeout(container.poll);
  if (!ladders.length) {
    replace(container, head, runningOnly()
      ? h("p", { class: "empty" }, "No ladder is running.")
      : h("p", { class: "empty" }, "No ladders yet. Start one with ", h("code", {}, "arena ladder create"), " or the button above."));
    return;
  }
  const rows = ladders.map((ladder) => h("tr", { "data-ladder": ladder.id },
    h("td", { class: "name" }, ladderLink(ladder.id, ladder.name || `ladder ${shortId(ladder.id)}`)),
    h("td", {}, badge(ladder.status, ladder.status === "running" ? "live" : "")),
    h("td", { class: "hide-narrow" }, gameText(ladder.game)),
    h("td", { class: "hide-narrow" }, `${ladder.bots.length} bots`),
    h("td", {}, h("div", { class: "progress-line" }, progressBar(ladder.games_done, ladder.games_total),
      h("span", { class: "num small" }, `${ladder.games_done}/${ladder.games_total}`))),
    h("td", { class: "hide-narrow nowrap" }, timeCell(ladder.created_at))));
  const listed = h("div");
  replace(container, head, listed);
  pageOfRows(listed, {
    first: true, rows, nextToken: token,
    more: () => refreshList(container, read + 1, ladders.length),
    headers: ["Ladder", "Status", { text: "Game", attrs: { class: "hide-narrow" } },
      { text: "Bots", attrs: { class: "hide-narrow" } }, "Games", { text: "Created", attrs: { class: "hide-narrow" } }],
  });
  if (focusRow >= 0) listed.querySelectorAll("tr[data-ladder]")[focusRow]?.querySelector("a")?.focus();
  if (ladders.some((l) => l.status === "running")) {  // a light poll while any runs
    container.poll = setTimeout(() => {
      if (container.isConnected) refreshList(container, read).catch(() => {});
    }, 5000);
  }
}

async function showLiveMatches(container) {
  const data = await getJSON("/api/matches?status=running&limit=8");
  if (!data.matches.length) return;
  replace(container, h("div", { class: "card" }, h("h2", {}, "Playing now"),
    h("div", { class: "row" }, data.matches.map((m) => h("a", { class: "button", href: `/matches/${encodeURIComponent(m.id)}` },
      badge("live", "live"), " ", `${m.black} vs ${m.white}`)))));
}

/** A game's clock: "1,000 ms per move", and the budget per side with its increment. */
export function clockText(x) {
  const move = `${int(x.move_time_ms)} ms per move`;
  if (!x.game_time_ms) return move;
  return `${move}, ${int(x.game_time_ms)} ms a game${x.increment_ms ? ` + ${int(x.increment_ms)} ms a move` : ""}`;
}

/** The parts of a clock, as the rating list's address names them. */
export const CLOCK_PARTS = ["move_time_ms", "game_time_ms", "increment_ms"];

/** "&move_time_ms=1000&game_time_ms=0&increment_ms=0": a clock in an address's query. */
export function clockQuery(x) {
  return CLOCK_PARTS.map((part) => `&${part}=${x[part]}`).join("");
}

export function gameText(game) {
  if (game.kind === "othello") return game.variant === "international" ? "Othello (international)" : "Othello";
  return `Gomoku ${game.size}\u00d7${game.size}${game.variant === "exact-five" ? " (exact five)" : ""}`;
}

/** Rows of standings (a ladder's, or a pool of the rating list) as a table, best first. */
export function standingsTable(rows) {
  const lines = rows.map((row) => h("tr", { "data-bot": row.bot },
    h("td", { class: "rank num" }, String(row.rank)),
    h("td", { class: "name" }, botLink(row.bot)),
    h("td", { class: "num", "data-field": "elo" }, signed(row.elo)),
    h("td", { class: "num hide-narrow", "data-field": "interval" }, `[${signed(row.elo_low)}, ${signed(row.elo_high)}]`),
    h("td", { class: "num hide-narrow", "data-field": "games" }, String(row.games)),
    h("td", { class: "num win", "data-field": "wins" }, String(row.wins)),
    h("td", { class: "num draw", "data-field": "draws" }, String(row.draws)),
    h("td", { class: "num loss", "data-field": "losses" }, String(row.losses)),
    h("td", { class: "num", "data-field": "score" }, pct(row.score_pct))));
  return table(["#", "Bot", { text: "Elo", attrs: { class: "num" } }, { text: "95% interval", attrs: { class: "num hide-narrow" } },
    { text: "Games", attrs: { class: "num hide-narrow" } }, { text: "W", attrs: { class: "num" } },
    { text: "D", attrs: { class: "num" } }, { text: "L", attrs: { class: "num" } },
    { text: "Score", attrs: { class: "num" } }], lines, { class: "standings" });
}

// -- a new ladder --------------------------------------------------------------------------

async function toggleForm(container) {
  if (container.firstChild) { replace(container); return; }
  const picks = h("div", { class: "bot-picks" }, h("span", { class: "muted" }, "Loading bots\u2026"));
  const keyOf = requestKeys();
  const message = h("div");
  const field = (label, input) => h("label", {}, label, input);
  const inputs = {
    name: h("input", { name: "name", placeholder: "optional" }),
    ...await gameSelects(() => loadPicks()),
    format: h("select", { name: "format" }, h("option", { value: "round-robin" }, "Round robin"), h("option", { value: "gauntlet" }, "Gauntlet (first bot vs the field)")),
    games: h("input", { name: "games_per_pairing", type: "number", min: 1, max: 20000, value: 2 }),
    every: h("input", { name: "every_opening", type: "checkbox",
      onchange: () => { inputs.games.disabled = inputs.every.checked; } }),
    suite: h("select", { name: "opening_suite" }, SUITES.map(([value, label]) => h("option", { value }, label))),
    time: h("input", { name: "move_time_ms", type: "number", min: 1, value: 1000 }),
    gameTime: h("input", { name: "game_time_ms", type: "number", min: 0, value: 0 }),
    increment: h("input", { name: "increment_ms", type: "number", min: 0, value: 0 }),
    seed: h("input", { name: "seed", type: "number", min: 0, value: 0 }),
    trees: h("input", { name: "capture_trees", type: "checkbox" }),
    adjudicate: adjudicateInput(),
    own: h("textarea", { name: "openings", rows: 3, placeholder: "optional: one opening a line, e.g. f5 d6 c3 (instead of a suite)" }),
  };
  async function loadPicks() {
    const bots = [];  // every page: a bot past the first 200 could not be picked
    let token = "";
    do {
      const page = new URLSearchParams({ game: inputs.game.value, limit: "200" });
      if (token) page.set("page_token", token);
      const data = await getJSON(`/api/bots?${page}`);
      bots.push(...data.bots);
      token = data.next_page_token;
    } while (token);
    replace(picks, bots.length ? bots.map((bot) => h("label", { class: "check" },
      h("input", { type: "checkbox", value: bot.name }), `${bot.name}@${bot.version}`))
      : h("span", { class: "muted" }, "No bots of this game yet."));
    inputs.suite.value = "";  // the new game's own: a suite of the other game would be refused
  }
  async function submit(event) {
    event.preventDefault();
    const bots = [...picks.querySelectorAll("input:checked")].map((box) => box.value);
    const body = {
      name: inputs.name.value, game: inputs.game.value, variant: inputs.variant.value,
      size: Number(inputs.size.value),
      bots, format: inputs.format.value, games_per_pairing: inputs.every.checked ? 0 : Number(inputs.games.value),
      opening_suite: inputs.suite.value, openings: ownOpenings(inputs.own.value),
      move_time_ms: Number(inputs.time.value),
      game_time_ms: Number(inputs.gameTime.value), increment_ms: Number(inputs.increment.value),
      seed: Number(inputs.seed.value), capture_trees: inputs.trees.checked,
      adjudicate_empties: Number(inputs.adjudicate.value),
    };
    body.request_id = keyOf(body);
    try {
      const ladder = await act(() => send("POST", "/api/ladders", body));
      if (ladder) location.href = `/ladders/${encodeURIComponent(ladder.id)}`;
    } catch (error) {
      replace(message, notice(error.describe ? error.describe() : String(error), "error"));
    }
  }
  replace(container, h("form", { class: "card", onsubmit: submit },
    h("h2", {}, "New ladder"),
    h("div", { class: "form-grid" },
      field("Name", inputs.name), field("Game", inputs.game),
      field("Variant (Gomoku: rule)", inputs.variant), field("Board", inputs.size),
      field("Format", inputs.format), field("Games per pairing", inputs.games),
      h("label", { class: "check" }, inputs.every, "Every opening, twice (colours swapped)"),
      field("Openings", inputs.suite), field("Move time (ms)", inputs.time),
      field("Game time per side (ms, 0: none)", inputs.gameTime),
      field("Increment per move (ms)", inputs.increment), field("Seed", inputs.seed),
      field(ADJUDICATE_LABEL, inputs.adjudicate),
      h("label", { class: "check" }, inputs.trees, "Store search trees"),
      h("label", { class: "wide" }, "Openings of its own", inputs.own),
      h("div", { class: "wide" }, h("h3", {}, "Bots"), picks)),
    message,
    h("div", { class: "row" }, h("button", { class: "primary", type: "submit" }, "Create ladder"),
      h("span", { class: "muted small" }, "Created as you, with your token."))));
  await loadPicks();
}

// -- one ladder ------------------------------------------------------------------------------

export async function ladderPage(main, ladderId) {
  const data = await getJSON(`/api/ladders/${encodeURIComponent(ladderId)}`);
  const view = new LadderView(main, ladderId, data);
  view.render();
  await view.loadGames();
  if (data.ladder.status === "running") view.follow();
}

/** A ladder's format in words: an SPRT ladder is `arena test`'s version test. */
function formatText(ladder) {
  return { gauntlet: "gauntlet", sprt: "SPRT version test" }[ladder.format] || "round robin";
}

/** An SPRT ladder's test: the verdict (as `arena ladder standings` says it), the
 * hypotheses and where the log-likelihood ratio stands. */
function sprtView(ladder) {
  const test = ladder.sprt;
  const [first, second] = ladder.bots;
  return h("div", { class: "sprt" },
    h("p", { "data-testid": "sprt-verdict" }, h("strong", {}, "Verdict: "), test.text),
    h("p", { class: "muted small" },
      `H0: ${first} is at most ${test.elo0} Elo stronger than ${second}; H1: at least ${test.elo1} `
      + `(\u03b1 ${test.alpha}, \u03b2 ${test.beta}). LLR ${signed(test.llr, 2)} in `
      + `[${signed(test.lower_bound, 2)}, ${signed(test.upper_bound, 2)}] after ${test.pairs} `
      + `colour-swapped pairs; pentanomial ${test.pentanomial.join(" ") || "0 0 0 0 0"}.`));
}


class LadderView {
  constructor(main, id, standings) {
    this.main = main;
    this.id = id;
    this.standings = standings;
    this.startedAt = Date.now();
    this.doneAtStart = standings.ladder.games_done;
    this.parts = { head: h("div"), progress: h("div", { class: "card" }), standings: h("div", { class: "card" }),
      chart: h("div", { class: "card" }), matrix: h("div", { class: "card" }), games: h("div", { class: "card" }),
      message: h("div") };
  }

  render() {
    const p = this.parts;
    replace(this.main, p.head, p.message, p.progress, p.standings,
      h("div", { class: "grid-2" }, p.chart, p.matrix), h("div", { class: "stack" }, p.games));
    this.renderHead();
    this.renderProgress();
    this.renderStandings();
  }

  renderHead() {
    const ladder = this.standings.ladder;
    const title = ladder.name || `Ladder ${shortId(ladder.id)}`;
    setTitle(title);
    const cancel = ladder.status === "running"
      ? h("button", { class: "danger", onclick: () => this.cancel() }, "Cancel ladder") : null;
    replace(this.parts.head, h("div", { class: "page-head" },
      h("div", {},
        h("h1", {}, title, " ", badge(ladder.status, ladder.status === "running" ? "live" : "")),
        h("div", { class: "meta" },
          h("span", {}, gameText(ladder.game)),
          h("span", {}, formatText(ladder)),
          ladder.sprt ? h("span", {}, `up to ${ladder.sprt.max_games} games`)
            : h("span", {}, `${ladder.games_per_pairing} games per pairing`),
          openingsText(ladder),
          h("span", {}, clockText(ladder)),
          ladder.capture_trees ? h("span", {}, "search trees stored") : null,
          h("span", { class: "mono" }, ladder.id),
          ladder.owner ? h("span", {}, `by ${ladder.owner}`) : null,
          h("span", {}, ago(ladder.created_at))),
        openingsList(ladder)),
      cancel));
  }

  renderProgress() {
    const ladder = this.standings.ladder;
    const done = ladder.games_done, total = ladder.games_total;
    let eta = "";
    const played = done - this.doneAtStart;
    if (ladder.status === "running" && played > 0) {
      const perGame = (Date.now() - this.startedAt) / 1000 / played;
      eta = ` \u00b7 about ${duration(perGame * (total - done))} left`;
    }
    const void_ = ladder.games_void ? ` (${ladder.games_void} void: no result)` : "";
    replace(this.parts.progress,
      h("div", { class: "progress-line" }, progressBar(done, total),
        h("strong", { class: "num", "data-testid": "games-done" }, `${done}/${total}`)),
      h("div", { class: "muted small" }, `games over${void_}${eta}`),
      ladder.waiting ? h("p", { class: "small", "data-testid": "ladder-waiting" },
        h("strong", {}, "Waiting: "), ladder.waiting) : null,
      ladder.ended_because ? h("p", { class: "small", "data-testid": "ladder-ended" },
        h("strong", {}, "Ended by the arena: "), ladder.ended_because) : null,
      ladder.sprt ? sprtView(ladder) : null);
  }

  renderStandings() {
    const { rows, head_to_head: pairs } = this.standings;
    // Before a game counts, every bot has a row of nothing (ranked, Elo 0, 0.0%).
    if (!rows.some((row) => row.games > 0)) {
      replace(this.parts.standings, h("h2", {}, "Standings"), h("p", { class: "empty" }, "No finished games yet."));
      replace(this.parts.chart);
      replace(this.parts.matrix);
      return;
    }
    replace(this.parts.standings, h("h2", {}, "Standings"), standingsTable(rows));
    // Drawn at the card's own width, so its text stays readable on a phone.
    const width = Math.max(300, this.parts.chart.clientWidth - 36);
    replace(this.parts.chart, h("h2", {}, "Elo with 95% intervals"), eloChart(rows, width));
    replace(this.parts.matrix, h("h2", {}, "Head to head"), matrix(rows, pairs),
      h("p", { class: "muted small" }, "Row bot's wins-draws-losses against the column bot."));
  }

  /** The ladder's games, newest first, a page at a time ("Load more" adds the next after
   * them, as on the match list): a ladder may have 20,000. */
  async loadGames(token = "") {
    const query = new URLSearchParams({ ladder: this.id, limit: String(GAMES_PAGE) });
    if (token) query.set("page_token", token);
    const data = await getJSON(`/api/matches?${query}`);
    const rows = data.matches.map((m) => h("tr", { "data-match": m.id },
      h("td", { class: "hide-narrow" }, matchLink(m.id)), h("td", { class: "name" }, botLink(m.black)),
      h("td", { class: "name" }, botLink(m.white)), resultCell(m),
      h("td", { class: "hide-narrow nowrap" }, timeCell(m.finished_at || m.created_at))));
    this.pagesShown = token ? this.pagesShown + 1 : 1;
    if (!token) {
      this.parts.gameList = h("div");
      this.parts.gameNote = h("p", { class: "muted small" });
      replace(this.parts.games, h("h2", {}, "Games"), this.parts.gameNote, this.parts.gameList);
    }
    replace(this.parts.gameNote, `${this.playedText()}, newest first.`);
    pageOfRows(this.parts.gameList, {
      first: !token, rows, empty: "No games yet.", nextToken: data.next_page_token,
      more: (next) => this.loadGames(next),
      headers: [{ text: "Match", attrs: { class: "hide-narrow" } }, "Black", "White", "Result", { text: "When", attrs: { class: "hide-narrow" } }],
    });
  }

  follow() {
    let refresh = null;
    stream(`/api/ladders/${encodeURIComponent(this.id)}/events`, {
      progress: (event) => {
        // A read of the standings may have shown a game whose event is still on its way.
        if (event.ladder.games_done < this.standings.ladder.games_done) return;
        this.standings.ladder = event.ladder;
        this.renderProgress();
        if (event.finished_match_id && !refresh) {
          // Standings change with each finished game; fetch at most twice a second.
          refresh = setTimeout(() => { refresh = null; this.reload(); }, 500);
        }
      },
      end: async () => {
        await this.reload();
        // Its answer may be one shared from before the last game was counted (api.js): once
        // more when every such answer has expired.
        setTimeout(() => this.reload(), SHARED_ANSWER_MS + 100);
      },
    }, { onState: (state, error) => this.showState(state, error) });
  }

  /** The standings read again. An answer from before what the page already shows (one
   *  the gateway shared from before the last event, api.js) is not shown: the count went
   *  back a game and stayed there until the next one ended; it is asked again once every
   *  such answer has expired. */
  async reload() {
    try {
      const fresh = await getJSON(`/api/ladders/${encodeURIComponent(this.id)}`);
      // Compared with what is shown now, not before the read: an event may have come
      // while it was under way.
      if (fresh.ladder.games_done < this.standings.ladder.games_done) {
        clearTimeout(this.again);
        this.again = setTimeout(() => this.reload(), SHARED_ANSWER_MS + 100);
        return;
      }
      this.standings = fresh;
      this.renderHead();
      this.renderProgress();
      this.renderStandings();
      await this.refreshGames();
    } catch (error) {
      this.showState("error", error);
    }
  }

  playedText() {
    const ladder = this.standings.ladder;
    const void_ = ladder.games_void ? `, ${int(ladder.games_void)} of them void` : "";
    return `${int(ladder.games_done)} of ${int(ladder.games_total)} over${void_}`;
  }

  /** After a game: the first page drawn again, unless the viewer has loaded more of them
   * (redrawing would drop those while they read): then the note offers the newest. */
  async refreshGames() {
    if (this.pagesShown > 1) {
      replace(this.parts.gameNote, `${this.playedText()}. `,
        h("button", { "data-testid": "newest-games", onclick: () => this.loadGames() },
          "Show the newest first"));
      return;
    }
    await this.loadGames();
  }

  showState(state, error) {
    const text = liveStateText(state, error);
    replace(this.parts.message, text ? notice(text, state === "error" ? "error" : "") : null);
  }

  async cancel() {
    if (!confirm("Cancel the games of this ladder not yet played?")) return;
    try {
      await act(() => send("POST", `/api/ladders/${encodeURIComponent(this.id)}/cancel`, {}));
      await this.reload();
    } catch (error) {
      replace(this.parts.message, notice(error.describe ? error.describe() : String(error), "error"));
    }
  }
}

function matrix(rows, pairs) {
  const byPair = new Map(pairs.map((p) => [`${p.bot}\u0000${p.opponent}`, p]));
  const labels = rows.map((r) => r.bot);
  const head = h("tr", {}, h("th", {}, ""), labels.map((label, i) => h("th", { title: label }, `#${i + 1}`)));
  const body = labels.map((bot, i) => h("tr", {},
    h("th", { class: "rowhead", title: bot }, `#${i + 1} `, botLink(bot)),
    labels.map((opponent) => {
      if (opponent === bot) return h("td", { class: "self" }, "\u2014");
      const pair = byPair.get(`${bot}\u0000${opponent}`);
      if (!pair) return h("td", { class: "self" }, "");
      const games = pair.wins + pair.draws + pair.losses;
      const score = games ? (pair.wins + pair.draws / 2) / games : 0.5;
      const los = pair.los === null ? "" : `, LOS ${(pair.los * 100).toFixed(0)}%`;
      const cell = h("td", { title: `${bot} vs ${opponent}: ${pair.wins}-${pair.draws}-${pair.losses}${los}` },
        `${pair.wins}-${pair.draws}-${pair.losses}`);
      const colour = score >= 0.5 ? "var(--heat-pos)" : "var(--heat-neg)";
      cell.style.background = `color-mix(in srgb, ${colour} ${Math.round(Math.abs(score - 0.5) * 90)}%, transparent)`;
      return cell;
    })));
  return h("div", { class: "table-wrap" }, h("table", { class: "matrix" }, h("thead", {}, head), h("tbody", {}, body)));
}
