// One match: the board at any ply (first/previous/next/last buttons, arrow keys, the move
// list, a slider), each move's search, downloads, and, while the match runs, new moves as
// the referee applies them (a live stream; the board follows unless you stepped back).

import { act } from "../actions.js";
import { SHARED_ANSWER_MS, download, getJSON, liveStateText, send, stream } from "../api.js";
import { renderBoard } from "../board.js";
import { badge, h, int, ladderLink, notice, playerLink, replace, s, setTitle } from "../dom.js";
import { clockText, gameText } from "./ladders.js";

// Drawn, not typed: the media-control characters are missing from many fonts.
const ICONS = {
  first: "M3 2h2v12H3zM14 2v12L6 8z",
  previous: "M12 2v12L4 8z",
  next: "M4 2v12l8-6z",
  last: "M11 2h2v12h-2zM2 2v12l8-6z",
};
const FORMAT_NAMES = { native: "Native (JSON)", ggf: "GGF", transcript: "Transcript", psq: "PSQ" };

export async function matchPage(main, matchId) {
  const match = await getJSON(`/api/matches/${encodeURIComponent(matchId)}`);
  const view = new MatchView(main, match);
  view.render();
  const asked = () => {
    const found = /^#ply=(\d+)$/.exec(location.hash);
    return found ? Number(found[1]) : null;
  };
  view.go(asked() ?? view.lastPly);
  // An address with another ply typed in, or a link to one on this page: the board goes.
  window.addEventListener("hashchange", () => {
    const ply = asked();
    if (ply !== null && ply !== view.ply) view.go(ply);
  });
  if (match.status === "pending" || match.status === "running") view.follow();
}

class MatchView {
  constructor(main, match) {
    this.main = main;
    this.match = match;
    this.plies = match.plies;
    this.ply = 0;
    this.following = true;
    this.el = {
      players: h("div", { class: "players" }), board: h("div", { class: "board-holder" }),
      result: h("p", { class: "result-line", "aria-live": "polite" }), label: h("span", { class: "ply-label", "aria-live": "polite" }),
      slider: h("input", { class: "slider", type: "range", min: 0, value: 0, "aria-label": "Ply",
        oninput: (event) => this.go(Number(event.target.value)) }),
      info: h("div", { class: "move-info" }), moves: h("div", { class: "moves", role: "group", "aria-label": "Moves" }),
      downloads: h("div", { class: "downloads" }), message: h("div"), head: h("div"),
      ask: h("form", { class: "ask", onsubmit: (event) => { event.preventDefault(); this.ask(); } },
        h("label", {}, "Bot ", h("input", { name: "bot", required: true, autocomplete: "off", placeholder: "name or name@version" })),
        h("label", {}, "Time (ms) ", h("input", { name: "time_ms", type: "number", min: 1, max: 60000, value: 1000 })),
        h("button", { type: "submit", class: "primary" }, "Ask")),
      answer: h("div", { class: "answer", "aria-live": "polite" }),
      edit: h("a", { "data-testid": "edit-position" }, "Edit this position →"),
    };
    this.answer = null;  // the last bot's answer (its ply, move and search)
  }

  get lastPly() { return this.plies.length - 1; }

  render() {
    const el = this.el;
    const button = (label, icon, action) => h("button", { type: "button", "aria-label": label, title: label,
      "data-action": label.toLowerCase(), onclick: action }, s("svg", { class: "icon", viewBox: "0 0 16 16", "aria-hidden": "true" },
      s("path", { d: icon })));
    const controls = h("div", { class: "controls" },
      button("First", ICONS.first, () => this.go(0)), button("Previous", ICONS.previous, () => this.go(this.ply - 1)),
      el.label,
      button("Next", ICONS.next, () => this.go(this.ply + 1)), button("Last", ICONS.last, () => this.go(this.lastPly)));
    replace(this.main, el.head, el.message, h("div", { class: "match-layout" },
      h("div", { class: "card board-card" }, el.players, el.board, el.result, controls, el.slider),
      h("div", {},
        h("div", { class: "card" }, h("h2", {}, "This move"), el.info),
        h("div", { class: "card" }, h("h2", {}, "Ask a bot"),
          h("p", { class: "muted small" }, "A bot's move in the position on the board (your token; your analysis quota)."),
          el.ask, el.answer, h("p", { class: "small" }, el.edit)),
        h("div", { class: "card" }, h("h2", {}, "Moves"), el.moves),
        h("div", { class: "card" }, h("h2", {}, "Download"), el.downloads))));
    this.renderHead();
    this.renderMoves();
    this.renderDownloads();
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  renderHead() {
    const m = this.match;
    setTitle(`${m.black} vs ${m.white}`);
    const status = m.status === "running" ? badge("live", "live") : badge(m.status);
    const over = m.status === "finished" || m.status === "cancelled";
    const del = over ? h("button", { class: "danger", onclick: () => this.remove() }, "Delete")
      : h("button", { class: "danger", onclick: () => this.cancel() }, "Cancel match");
    replace(this.el.head, h("div", { class: "page-head" },
      h("div", {},
        h("h1", {}, playerLink(m, m.black), h("span", { class: "muted" }, " vs "), playerLink(m, m.white), " ", status),
        h("div", { class: "meta" }, h("span", {}, gameText(m.game)),
          m.imported_from ? h("span", { "data-testid": "imported" }, `imported from a ${m.imported_from} record by `
            + `${m.owner}: its players are names, no bots`) : h("span", {}, clockText(m)),
          m.origin ? h("span", { "data-testid": "origin" }, originText(m.origin)) : null,
          m.ladder_id ? h("span", {}, "in ", ladderLink(m.ladder_id, m.ladder_name)) : null,
          m.capture_trees ? h("span", {}, "search trees stored") : null,
          m.adjudicate_empties ? h("span", {}, `adjudicated at ${m.adjudicate_empties} empty squares`) : null,
          h("span", { class: "mono" }, m.id))),
      del));
    this.renderResult();
  }

  renderResult() {
    const m = this.match, r = m.result;
    let text;
    if (r?.void) {
      text = `Void: no result${r.detail ? ` (${r.detail})` : ""}`;
    } else if (r) {
      const who = r.winner ? `${r.winner === "black" ? m.black : m.white} (${r.winner}) wins` : "Draw";
      const how = r.termination === "normal" ? "" : `, ${r.termination}${r.detail ? `: ${r.detail}` : ""}`;
      const gomoku = m.game.kind === "gomoku";
      const score = gomoku ? (r.termination === "normal" && r.winner ? " with five in a row" : "")
        : `, ${r.black_count}-${r.white_count}`;
      text = `${r.score} \u00b7 ${who}${score}${how}`;
    } else {
      text = m.status === "pending" ? "Waiting for a referee\u2026" : m.status === "running" ? "Playing\u2026" : m.status;
    }
    replace(this.el.result, text);
  }

  go(ply) {
    ply = Math.max(0, Math.min(this.lastPly, Number.isFinite(ply) ? ply : 0));
    this.ply = ply;
    this.following = ply === this.lastPly;
    const view = this.plies[ply];
    // The asked bot's move, marked on the board it was asked about (as `arena analyze`).
    const scores = this.answer?.ply === ply ? { [this.answer.square]: "!" } : null;
    replace(this.el.board, renderBoard(view, this.match.game, { scores }));
    this.el.board.dataset.ply = String(ply);
    this.renderPlayers(view);
    this.el.label.textContent = `Ply ${ply} / ${this.lastPly}`;
    this.el.slider.max = String(this.lastPly);
    this.el.slider.value = String(ply);
    this.renderInfo(view);
    for (const item of this.el.moves.children) item.classList.toggle("current", Number(item.dataset.ply) === ply);
    this.scrollMoveList();
    for (const [action, disabled] of [["first", ply === 0], ["previous", ply === 0], ["next", ply === this.lastPly], ["last", ply === this.lastPly]]) {
      this.main.querySelector(`[data-action="${action}"]`).disabled = disabled;
    }
    this.el.edit.href = `/editor?${new URLSearchParams({ game: this.match.game.kind, position: view.position })}`;
    // A ply stepped back to is in the address; following, none is: an address copied
    // from a live page (or a reload) opened frozen at the ply it showed then.
    history.replaceState(null, "", this.following ? location.pathname + location.search : `#ply=${ply}`);
  }

  /** Keep the current move in sight inside the list (never scrolls the page itself). */
  scrollMoveList() {
    const list = this.el.moves, current = list.querySelector(".current");
    if (!current) { list.scrollTop = 0; return; }
    const top = current.offsetTop, bottom = top + current.offsetHeight;
    if (top < list.scrollTop || bottom > list.scrollTop + list.clientHeight) {
      list.scrollTop = top - list.clientHeight / 2;
    }
  }

  renderPlayers(view) {
    const m = this.match, othello = m.game.kind === "othello";
    // With a game budget: what is left of each side's after this ply.
    const clock = (color) => view.clock
      ? h("span", { class: "clock", "data-clock": color, title: "game time left" }, timeLeft(view.clock[color])) : null;
    const side = (color, label, count) => h("div", { class: ["player", color, !view.over && view.turn === color && "to-move"] },
      color === "black" ? [h("span", { class: "disc black" }), h("span", { class: "pname" }, playerLink(m, label)), clock(color), h("span", { class: "count", "data-count": color }, String(count))]
        : [h("span", { class: "count", "data-count": color }, String(count)), clock(color), h("span", { class: "pname" }, playerLink(m, label)), h("span", { class: "disc white" })]);
    replace(this.el.players, side("black", m.black, view.black), h("span", { class: "vs" }, othello ? "discs" : "stones"),
      side("white", m.white, view.white));
  }

  renderInfo(view) {
    const info = this.el.info;
    if (view.ply === 0) {
      const opening = this.plies.slice(1, this.match.opening_plies + 1).map((p) => p.move).join(" ");
      replace(info, h("div", { class: "headline" }, "Start position"),
        opening ? h("p", { class: "muted" }, `Opening played before the bots: ${opening}`) : null,
        h("p", { class: "muted small" }, "Use \u2190 \u2192 (Home, End) or the buttons to step through the game."));
      return;
    }
    const verb = view.move === "pass" ? "passes" : view.move;
    const headline = h("div", { class: "headline" }, `${view.ply}. ${view.color} ${verb}`);
    if (view.opening) {
      replace(info, headline, h("p", { class: "muted" }, "An opening move, played before the bots took over."));
      return;
    }
    const facts = [["Time", `${int(view.time_ms)} ms`], ...searchFacts(view.search)];
    if (view.worker) facts.push(["Worker", view.worker]);
    const tree = view.has_tree
      ? h("a", { class: "button", href: `/matches/${encodeURIComponent(this.match.id)}/tree/${view.record_ply}` }, "Search tree \u2192") : null;
    replace(info, headline, factList(facts), tree ? h("p", {}, tree) : null);
  }

  /** Ask the bot in the form for its move in the position shown (as the person). */
  async ask() {
    const form = this.el.ask, ply = this.ply, button = form.querySelector("button");
    const bot = form.elements.bot.value.trim(), time_ms = Number(form.elements.time_ms.value);
    button.disabled = true;
    if (this.answer) {  // the last bot's mark goes with its answer, whatever this one says
      this.answer = null;
      this.go(this.ply);
    }
    replace(this.el.answer, h("p", { class: "muted" }, `Asking ${bot}\u2026`));
    try {
      const answer = await act(() => send("POST", `/api/matches/${encodeURIComponent(this.match.id)}/analysis`,
        { ply, bot, time_ms }));
      if (!answer) { replace(this.el.answer, null); return; }
      this.answer = answer;
      replace(this.el.answer, h("div", { class: "headline" }, `${bot} at ply ${answer.ply}: ${answer.move}`),
        factList(searchFacts(answer.search)));
      if (this.ply === answer.ply) this.go(answer.ply);
    } catch (error) {
      replace(this.el.answer, notice(error.describe ? error.describe() : String(error), "error"));
    } finally {
      button.disabled = false;
    }
  }

  renderMoves() {
    replace(this.el.moves, this.plies.slice(1).map((view) => this.moveButton(view)));
  }

  moveButton(view) {
    return h("button", { type: "button", class: view.opening ? "opening" : "", "data-ply": view.ply,
      title: view.opening ? "opening move" : "", onclick: () => this.go(view.ply) },
    h("span", { class: "n" }, String(view.ply)), h("span", { class: `disc ${view.color}` }), view.move);
  }

  renderDownloads() {
    replace(this.el.downloads, (this.match.formats || []).map((format) => h("button", { type: "button",
      "data-format": format, onclick: () => this.download(format) }, FORMAT_NAMES[format] || format)));
  }

  async download(format) {
    try {
      await download(`/api/matches/${encodeURIComponent(this.match.id)}/export/${format}`, `${this.match.id}.${format}`);
    } catch (error) {
      replace(this.el.message, notice(error.describe ? error.describe() : String(error), "error"));
    }
  }

  onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.target.closest?.("input, select, textarea, dialog")) return;
    const moves = { ArrowLeft: this.ply - 1, ArrowRight: this.ply + 1, Home: 0, End: this.lastPly };
    if (!(event.key in moves)) return;
    event.preventDefault();
    this.go(moves[event.key]);
  }

  addPly(view) {
    if (view.ply < this.plies.length) return;  // seen already (a reconnect replays history)
    if (view.ply > this.plies.length) { this.reload(); return; }  // a gap: fetch it all
    const follow = this.following;
    this.plies.push(view);
    this.el.moves.append(this.moveButton(view));
    if (follow) this.drawSoon();
    else {
      this.el.slider.max = String(this.lastPly);
      this.el.label.textContent = `Ply ${this.ply} / ${this.lastPly}`;
      this.main.querySelector('[data-action="next"]').disabled = false;
      this.main.querySelector('[data-action="last"]').disabled = false;
    }
    this.main.dataset.plies = String(this.plies.length);
  }

  /** Draw the newest ply at the next frame: a burst of moves (an endgame solved in a
   *  blink, a reconnect's history) is drawn once, not once per move. */
  drawSoon() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      if (this.following) this.go(this.lastPly);
    });
  }

  follow() {
    this.live = stream(`/api/matches/${encodeURIComponent(this.match.id)}/events`, {
      match: (event) => {
        if (this.match.status === "pending") { this.match.status = event.status; this.renderHead(); }
        for (const view of event.plies) this.addPly(view);
      },
      ply: (view) => {
        if (this.match.status !== "running") { this.match.status = "running"; this.renderHead(); }
        this.addPly(view);
      },
      ended: () => this.ended(),
    }, { onState: (state, error) => {
      const text = liveStateText(state, error);
      replace(this.el.message, text ? notice(text, state === "error" ? "error" : "") : null);
    } });
  }

  /** The match is over: its whole record. An answer shared from before the end (a read
   *  within a second of an earlier one, api.js) is not shown: asked again once every such
   *  answer has expired; the plies followed so far stay on the page meanwhile. */
  async ended() {
    const url = `/api/matches/${encodeURIComponent(this.match.id)}`;
    let match = await getJSON(url);
    if (["pending", "running"].includes(match.status)) {
      await new Promise((resolve) => setTimeout(resolve, SHARED_ANSWER_MS + 100));
      match = await getJSON(url);
    }
    this.show(match);
  }

  async reload() {
    this.show(await getJSON(`/api/matches/${encodeURIComponent(this.match.id)}`));
  }

  show(match) {
    const follow = this.following;
    this.match = match;
    this.plies = this.match.plies;
    this.renderHead();
    this.renderMoves();
    this.go(follow ? this.lastPly : this.ply);
  }

  async cancel() {
    if (!confirm("Stop this match now? Its creator calls it off: no result. The owner of one "
                 + "of its bots withdraws that bot: it loses.")) return;
    try {
      await act(() => send("POST", `/api/matches/${encodeURIComponent(this.match.id)}/cancel`, {}));
      await this.reload();
    } catch (error) {
      replace(this.el.message, notice(error.describe ? error.describe() : String(error), "error"));
    }
  }

  async remove() {
    if (!confirm("Delete this match for good?")) return;
    try {
      await act(() => send("DELETE", `/api/matches/${encodeURIComponent(this.match.id)}`));
      location.href = "/matches";
    } catch (error) {
      replace(this.el.message, notice(error.describe ? error.describe() : String(error), "error"));
    }
  }
}

/** What a search reported, as [label, value] pairs: each fact only if the bot reported
 *  it (a protocol engine may report no score or depth). */
export function searchFacts(search) {
  if (!search) return [];
  const facts = [];
  if (search.score !== null) facts.push(["Eval", `${search.score}${search.exact ? " (exact)" : ""}`]);
  if (search.depth !== null) facts.push(["Depth", String(search.depth)]);
  if (search.nodes) facts.push(["Nodes", int(search.nodes)], ["Speed", `${int(search.nps)} nodes/s`]);
  if (search.cache_hit) facts.push(["Cache", "answered from the shared cache"]);
  if (search.tied.length > 1) facts.push(["Tied", `drawn among ${search.tied.join(" ")}`]);
  if (search.pv.length) facts.push(["PV", h("span", { class: "pv" }, search.pv.join(" "))]);
  if (search.notes.length) facts.push(["Engine said", h("pre", { class: "notes" }, search.notes.join("\n"))]);
  return facts;
}

/** [label, value] pairs as a definition list. */
export function factList(facts) {
  return h("dl", { class: "kv" }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

/** A side's game time left: 1:05.2 from a minute, 9.8 s below. */
function timeLeft(ms) {
  const tenths = Math.floor(ms / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)} s`;
  const minutes = Math.floor(tenths / 600), rest = tenths % 600;
  return `${minutes}:${String(Math.floor(rest / 10)).padStart(2, "0")}.${rest % 10}`;
}

/** "played on 2003.01.02_03:04:05.UTC at NIOS": where and when an imported record says its
 *  game was played, as it wrote them (`arena match show` says the same). */
function originText(origin) {
  return ["played", origin.date && `on ${origin.date}`, origin.place && `at ${origin.place}`]
    .filter(Boolean).join(" ");
}
