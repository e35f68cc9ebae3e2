// The board editor (KReversi's, for both games): set stones on an Othello or Gomoku
// board, choose the side to move, and the rules check the position as it is drawn (its
// legal moves, or why no game reaches it). From there: a bot's move in it, a match that
// starts from it, or its text form for `arena match create --start`.
// `/editor?position=TEXT&game=GAME` opens a position (the match page links its plies).

import { act, requestKeys } from "../actions.js";
import { send, siteConfig } from "../api.js";
import { renderBoard, showCursor, squareName } from "../board.js";
import { h, notice, replace, setTitle } from "../dom.js";
import { factList, searchFacts } from "./match.js";

const STONES = [["X", "Black"], ["O", "White"], ["-", "Erase"]];
const SAID = { X: "black stone", O: "white stone", "-": "empty" };  // a square's stone, read out

export async function editorPage(main) {
  setTitle("Board editor");
  const { games } = await siteConfig();
  const query = new URLSearchParams(location.search);
  const kind = games[query.get("game")] ? query.get("game") : Object.keys(games)[0];
  const editor = new Editor(main, kind, games);
  editor.render();
  // A position is read as the game the address names, if it names one (a Gomoku text
  // read as Othello's was refused in Othello's words beside the Gomoku board chosen).
  const game = games[query.get("game")] ? { game: kind } : {};
  await editor.open(query.get("position") ? { position: query.get("position"), ...game } : null);
}

class Editor {
  constructor(main, kind, games) {
    this.main = main;
    this.kind = kind;
    this.games = games;  // every game's title, variants and boards (/api/config)
    this.checked = null;  // the rules' answer about the position drawn: {position, game, view}
    this.answer = null;   // the last bot's answer in it
    this.asks = 0;        // answers to a check older than the last are dropped
    this.size = null;     // the board's, and the keyboard's cursor on it (a square)
    this.cursor = 0;
    this.keyOf = requestKeys();
    const select = (name, label) => h("label", {}, label, h("select", { name, onchange: () => this.reshape() }));
    this.el = {
      form: h("form", { class: "form-grid editor-game", onsubmit: (event) => event.preventDefault() },
        select("game", "Game"), select("variant", "Variant (Gomoku: rule)"), select("size", "Board"),
        h("fieldset", { class: "stones wide" }, h("legend", {}, "Place"), STONES.map(([stone, label], index) =>
          h("label", { class: "check" }, h("input", { type: "radio", name: "stone", value: stone, checked: index === 0 }), label))),
        h("fieldset", { class: "stones wide" }, h("legend", {}, "To move"), ["black", "white"].map((side, index) =>
          h("label", { class: "check" }, h("input", { type: "radio", name: "turn", value: side, checked: index === 0,
            onchange: () => this.check(this.drawn()) }), side)))),
      // One widget for the keyboard (one Tab stop): the arrow keys move a cursor over its
      // squares, which a live line reads out (an SVG's squares take no focus of their own).
      board: h("div", { class: "board-holder editor-board", tabindex: 0, role: "application",
        "aria-label": "Board: the arrow keys move to a square, Enter or Space places the chosen stone there",
        "aria-describedby": "editor-cursor", onclick: (event) => this.click(event), onkeydown: (event) => this.key(event) }),
      cursor: h("p", { id: "editor-cursor", class: "sr-only", "aria-live": "polite", "data-testid": "editor-cursor" }),
      status: h("p", { class: "small", "data-testid": "editor-status", "aria-live": "polite" }),
      text: h("input", { name: "position", class: "mono", spellcheck: "false", autocomplete: "off",
        "aria-label": "Position (text form)" }),
      answer: h("div", { class: "answer", "aria-live": "polite" }),
      matchMessage: h("div"),
    };
    this.el.ask = h("form", { class: "ask", onsubmit: (event) => { event.preventDefault(); this.ask(); } },
      h("label", {}, "Bot ", h("input", { name: "bot", required: true, autocomplete: "off", placeholder: "name or name@version" })),
      h("label", {}, "Time (ms) ", h("input", { name: "time_ms", type: "number", min: 1, max: 60000, value: 1000 })),
      h("button", { type: "submit", class: "primary" }, "Ask"));
    this.el.match = h("form", { class: "form-grid", onsubmit: (event) => { event.preventDefault(); this.startMatch(); } },
      h("label", {}, "Black (bot)", h("input", { name: "black", required: true, autocomplete: "off" })),
      h("label", {}, "White (bot)", h("input", { name: "white", required: true, autocomplete: "off" })),
      h("label", {}, "Move time (ms)", h("input", { name: "move_time_ms", type: "number", min: 1, value: 1000 })),
      h("button", { type: "submit", class: "primary" }, "Start a match from here"));
  }

  get form() { return this.el.form.elements; }

  render() {
    replace(this.main,
      h("div", { class: "page-head" }, h("div", {}, h("h1", {}, "Board editor"),
        h("p", { class: "muted" }, "Click a square to place the chosen stone (again to take it away), or "
          + "on the board use the arrow keys and Enter. The rules check the position as you draw it."))),
      h("div", { class: "match-layout" },
        h("div", { class: "card board-card" }, this.el.board, this.el.cursor, this.el.status,
          h("div", { class: "row" },
            h("button", { type: "button", "data-action": "start", onclick: () => this.open({ game: this.kind,
              variant: this.form.variant.value, size: Number(this.form.size.value) }) }, "The game's start"),
            h("button", { type: "button", "data-action": "clear", onclick: () => this.clear() }, "Clear"))),
        h("div", { class: "stack" },
          h("div", { class: "card" }, h("h2", {}, "Position"), this.el.form,
            h("form", { class: "ask", onsubmit: (event) => { event.preventDefault(); this.open({ position: this.el.text.value.trim() }); } },
              h("label", {}, "Text form (for arena match create --start)", this.el.text),
              h("button", { type: "submit" }, "Open"))),
          h("div", { class: "card" }, h("h2", {}, "Ask a bot"), this.el.ask, this.el.answer),
          h("div", { class: "card" }, h("h2", {}, "Start a match"), this.el.match, this.el.matchMessage))));
    this.fillSelects();
  }

  /** The game, variant and board selects, for the game chosen. */
  fillSelects(variant = null, size = null) {
    const game = this.games[this.kind];
    const options = (values, current, text) => values.map((value) =>
      h("option", { value, selected: String(value) === String(current) }, text(value)));
    replace(this.form.game, options(Object.keys(this.games), this.kind, (name) => this.games[name].title));
    replace(this.form.variant, options(game.variants, variant ?? game.variants[0], String));
    replace(this.form.size, options(game.sizes, size ?? game.default_size, (n) => `${n}\u00d7${n}`));
  }

  /** Another game, variant or board: that game's start. */
  reshape() {
    const kind = this.form.game.value;
    if (kind !== this.kind) {
      this.kind = kind;
      this.fillSelects();
    }
    this.open({ game: this.kind, variant: this.form.variant.value, size: Number(this.form.size.value) });
  }

  /** Open a position: a text form (`{position}`), or the start of a game (`{game,
   *  variant, size}`, as the rules give it); the game's first start when `request` is null. */
  async open(request) {
    await this.check(request || { game: this.kind });
  }

  clear() {
    const size = Number(this.form.size.value);
    this.check(this.drawn("-".repeat(size * size)));
  }

  /** The position drawn in the form and on the board (with `cells` instead, if given). */
  drawn(cells = this.cells) {
    return { game: this.kind, variant: this.form.variant.value, size: Number(this.form.size.value),
      board: cells, turn: this.form.turn.value };
  }

  click(event) {
    const square = event.target.closest("g[data-square]");
    if (square) this.place(Number(square.dataset.square));
  }

  /** The board's keys: the arrows move the cursor a square (Home and End to its row's
   *  ends, PageUp and PageDown to its column's); Enter or Space does what a click does. */
  key(event) {
    if (event.altKey || event.ctrlKey || event.metaKey || !this.cells) return;
    const size = this.size, row = Math.floor(this.cursor / size), col = this.cursor % size;
    const to = { ArrowLeft: [row, col - 1], ArrowRight: [row, col + 1], ArrowUp: [row - 1, col],
      ArrowDown: [row + 1, col], Home: [row, 0], End: [row, size - 1], PageUp: [0, col], PageDown: [size - 1, col] };
    const within = (i) => Math.min(size - 1, Math.max(0, i));
    if (event.key === "Enter" || event.key === " ") this.place(this.cursor);
    else if (to[event.key]) this.point(within(to[event.key][0]) * size + within(to[event.key][1]));
    else return;
    event.preventDefault();  // Space and the arrows do not scroll the page
  }

  /** The cursor to `square`: its ring on the board, and its name and stone read out. */
  point(square) {
    this.cursor = square;
    showCursor(this.el.board.querySelector("svg"), square);
    const said = `${squareName(square, this.size)}, ${SAID[this.cells[square]]}`;
    if (this.el.cursor.textContent !== said) this.el.cursor.textContent = said;  // said once
  }

  /** The chosen stone on square `at` (taken away if it is there), as a click or Enter does. */
  place(at) {
    if (!this.cells) return;
    this.cursor = at;
    const chosen = this.form.stone.value;
    const cells = [...this.cells];
    cells[at] = cells[at] === chosen ? "-" : chosen;
    if (this.kind === "gomoku") {  // its stones say whose turn it is: black's when even
      const count = (stone) => cells.filter((c) => c === stone).length;
      this.form.turn.value = count("X") > count("O") ? "white" : "black";
    }
    this.check(this.drawn(cells.join("")));
  }

  /** Draw `body`'s board at once, then show what the rules say of it. */
  async check(body) {
    if (body.board) this.show(body.board, body.game === "othello" ? 8 : body.size, null);
    const asked = ++this.asks;
    try {
      const checked = await send("POST", "/api/positions", body);
      if (asked !== this.asks) return;
      this.checked = checked;
      this.kind = checked.game.kind;
      this.fillSelects(checked.game.variant, checked.game.size);
      this.form.turn.value = checked.view.turn;
      this.el.text.value = checked.position;
      this.show(checked.view.board, checked.game.size, checked.view);
      history.replaceState(null, "", `/editor?${new URLSearchParams({ game: this.kind, position: checked.position })}`);
    } catch (error) {
      if (asked !== this.asks) return;
      this.checked = null;
      replace(this.el.status, notice(error.describe ? error.describe() : String(error), "error"));
    }
  }

  /** The board (`view`: the rules' answer, with the legal moves; null while it comes). */
  show(cells, size, view) {
    this.cells = cells;
    if (this.answer && this.answer.position !== this.checked?.position) this.answer = null;
    const marks = this.answer && view ? { [this.answer.square]: "!" } : null;
    const game = { kind: this.kind, size };
    const counted = (stone) => [...cells].filter((c) => c === stone).length;
    replace(this.el.board, renderBoard(view || { board: cells, legal: [], black: counted("X"), white: counted("O") },
      game, { scores: marks, label: `Board being edited: ${counted("X")} black, ${counted("O")} white` }));
    if (size !== this.size) {  // another board: the cursor from its middle
      const middle = (size - 1) >> 1;
      this.size = size;
      this.cursor = middle * size + middle;
    }
    this.point(this.cursor);
    if (!view) return;
    const side = view.turn === "black" ? "Black" : "White";
    const moves = this.kind === "othello" ? ` \u00b7 ${view.legal.length} legal moves` : "";
    replace(this.el.status, view.over ? "The game is over here: no move to ask for."
      : `${side} to move${moves} \u00b7 ${view.black} black, ${view.white} white.`);
  }

  async ask() {
    const form = this.el.ask, button = form.querySelector("button");
    if (!this.checked) { replace(this.el.answer, notice("The position drawn is not one the rules accept.", "error")); return; }
    const bot = form.elements.bot.value.trim(), position = this.checked.position;
    button.disabled = true;
    this.answer = null;
    replace(this.el.answer, h("p", { class: "muted" }, `Asking ${bot}\u2026`));
    try {
      const answer = await act(() => send("POST", "/api/analysis",
        { game: this.kind, position, bot, time_ms: Number(form.elements.time_ms.value) }));
      if (!answer) { replace(this.el.answer, null); return; }
      replace(this.el.answer, h("div", { class: "headline", "data-testid": "editor-answer" }, `${bot}: ${answer.move}`),
        factList(searchFacts(answer.search)));
      if (this.checked?.position === position) {
        this.answer = { ...answer, position };
        this.show(this.checked.view.board, this.checked.game.size, this.checked.view);
      }
    } catch (error) {
      replace(this.el.answer, notice(error.describe ? error.describe() : String(error), "error"));
    } finally {
      button.disabled = false;
    }
  }

  async startMatch() {
    const fields = this.el.match.elements;
    if (!this.checked) { replace(this.el.matchMessage, notice("The position drawn is not one the rules accept.", "error")); return; }
    const body = { game: this.kind, start: this.checked.position, black: fields.black.value.trim(),
      white: fields.white.value.trim(), move_time_ms: Number(fields.move_time_ms.value) };
    body.request_id = this.keyOf(body);
    try {
      const match = await act(() => send("POST", "/api/matches", body));
      if (!match) return;
      this.keyOf = requestKeys();  // the next one is another match (back to this page)
      location.href = `/matches/${encodeURIComponent(match.id)}`;
    } catch (error) {
      replace(this.el.matchMessage, notice(error.describe ? error.describe() : String(error), "error"));
    }
  }
}
