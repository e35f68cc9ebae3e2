// The search tree behind one move, as KReversi's viewer shows it: an expandable tree of
// "score [move] Max|Min|Leaf" lines with alpha/beta and cut-offs, the principal variation
// highlighted, and the selected node's board with each child's score on its square.
// Large trees load lazily: a node's children are fetched when it is opened.

import { getJSON } from "../api.js";
import { renderBoard } from "../board.js";
import { h, int, matchLink, notice, replace, setTitle } from "../dom.js";

export async function treePage(main, matchId, recordPly) {
  const base = `/api/matches/${encodeURIComponent(matchId)}/trees/${recordPly}`;
  const [match, first] = await Promise.all([
    getJSON(`/api/matches/${encodeURIComponent(matchId)}`),
    getJSON(`${base}?levels=2`),
  ]);
  new TreeView(main, match, Number(recordPly), base, first).render();
}

class TreeView {
  constructor(main, match, recordPly, base, first) {
    this.main = main;
    this.match = match;
    this.base = base;
    this.summary = first;
    this.pv = new Set(first.pv);
    this.loaded = new Map();  // node id -> node json with `kids`
    this.boards = new Map([[first.node.id, first.board]]);
    this.remember(first.node);
    this.view = match.plies.find((p) => p.record_ply === recordPly);
    this.selected = first.node.id;
    this.el = { tree: h("ul", { class: "tree root", role: "tree", "aria-label": "Search tree",
      onkeydown: (event) => this.key(event) }), board: h("div"), caption: h("div", { class: "muted small" }), message: h("div") };
  }

  /** The keys of a tree (as a file manager's): up and down go from line to line among
   *  those shown, right opens a node or goes to its first child, left closes it or goes
   *  to its parent, Home and End to the first and last line; the board follows. */
  async key(event) {
    const labels = [...this.el.tree.querySelectorAll(".node > .label")];
    const at = labels.indexOf(document.activeElement);
    if (at < 0 || event.altKey || event.ctrlKey || event.metaKey) return;
    const li = labels[at].closest("li");
    const node = this.findNode(Number(li.dataset.node));
    const open = li.getAttribute("aria-expanded") === "true";
    let next = null;
    switch (event.key) {
      case "ArrowDown": next = labels[at + 1]; break;
      case "ArrowUp": next = labels[at - 1]; break;
      case "Home": next = labels[0]; break;
      case "End": next = labels[labels.length - 1]; break;
      case "ArrowRight":
        if (!node?.children) break;
        if (!open) { event.preventDefault(); await this.toggle(li, node); return; }
        next = li.querySelector(":scope > ul > li > .node > .label");
        break;
      case "ArrowLeft":
        if (open) { event.preventDefault(); await this.toggle(li, node); return; }
        next = li.parentElement.closest("li")?.querySelector(":scope > .node > .label");
        break;
      default: return;
    }
    event.preventDefault();  // the page does not scroll under the keys
    if (!next) return;
    next.focus();
    await this.select(Number(next.closest("li").dataset.node));
  }

  remember(node) {
    if (node.kids) {
      this.loaded.set(node.id, node);
      node.kids.forEach((kid) => this.remember(kid));
    }
  }

  render() {
    const view = this.view;
    const title = view ? `Move ${view.ply}: ${view.color} ${view.move}` : "Search tree";
    setTitle(title, "search tree");
    const back = view ? h("a", { href: `/matches/${encodeURIComponent(this.match.id)}#ply=${view.ply}` }, "\u2190 back to the game") : null;
    replace(this.main,
      h("div", { class: "page-head" }, h("div", {},
        h("h1", {}, title),
        h("div", { class: "meta" }, h("span", {}, `${this.match.black} vs ${this.match.white}`), matchLink(this.match.id),
          h("span", { "data-testid": "node-count" }, `${int(this.summary.nodes)} nodes`), back)),
      h("div", { class: "row" },
        h("button", { type: "button", onclick: () => this.expandPv() }, "Open the principal variation"),
        h("button", { type: "button", onclick: () => this.collapseAll() }, "Collapse all"))),
      this.summary.truncated ? this.cutShort() : null,
      this.el.message,
      h("div", { class: "tree-layout" },
        h("div", { class: "card" }, this.el.tree),
        h("div", { class: "card board-side" }, this.el.caption, this.el.board)));
    replace(this.el.tree, this.item(this.summary.node, true));
    this.showBoard(this.selected);
  }

  /** A tree the node budget cut short looked complete: its count beside the search's,
   *  and why a node's score can disagree with the children shown. */
  cutShort() {
    const recorded = int(this.summary.nodes), searched = this.view?.search?.nodes;
    const counts = searched > this.summary.nodes
      ? `the search visited ${int(searched)} nodes, and ${recorded} were recorded`
      : `${recorded} nodes were recorded, and the search went on past them`;
    return h("div", { class: "notice warn", "data-testid": "tree-truncated" },
      `This recording was cut short at its node budget: ${counts}. A node's score may rest `
      + "on children that are not shown, so it can disagree with the children here.");
  }

  item(node, open = false) {
    const li = h("li", { role: "treeitem", "data-node": node.id, "aria-expanded": node.children ? String(open) : null });
    const toggle = h("button", { type: "button", class: ["toggle", !node.children && "leaf"],
      "aria-label": `${open ? "Collapse" : "Expand"} ${node.move}`, onclick: () => this.toggle(li, node) }, open ? "\u25be" : "\u25b8");
    const label = h("button", { type: "button", class: "label", onclick: () => this.select(node.id) },
      h("span", { class: "score" }, String(node.score)), ` [${node.move}] `);
    const pv = this.pv.has(node.id);
    const line = h("div", { class: ["node", pv && "pv", node.id === this.selected && "selected"] },
      toggle, label, h("span", { class: ["kind", node.kind] }, cap(node.kind)),
      node.cutoff ? h("span", { class: "cut", title: "alpha-beta cut-off" }, "cut") : null,
      node.kind !== "leaf" ? h("span", { class: "ab", title: `alpha ${node.alpha}, beta ${node.beta}` },
        `\u03b1=${bound(node.alpha)} \u03b2=${bound(node.beta)}`) : null,
      node.children ? h("span", { class: "ab" }, `${node.children} children`) : null,
      pv ? h("span", { class: "pv-tag" }, "PV") : null);
    li.append(line);
    if (open) li.append(this.children(node));
    return li;
  }

  children(node) {
    const loaded = this.loaded.get(node.id);
    if (!loaded) return h("ul", { class: "tree" }, h("li", { class: "more" }, "Loading\u2026"));
    return h("ul", { class: "tree", role: "group" }, loaded.kids.map((kid) => this.item(kid)));
  }

  async toggle(li, node) {
    if (!node.children) return;
    const open = li.getAttribute("aria-expanded") === "true";
    if (open) {
      li.querySelector(":scope > ul")?.remove();
      this.setOpen(li, node, false);
      return;
    }
    await this.load(node.id);
    li.append(this.children(node));
    this.setOpen(li, node, true);
  }

  setOpen(li, node, open) {
    li.setAttribute("aria-expanded", String(open));
    const toggle = li.querySelector(":scope > .node > .toggle");
    toggle.textContent = open ? "\u25be" : "\u25b8";
    toggle.setAttribute("aria-label", `${open ? "Collapse" : "Expand"} ${node.move}`);
  }

  async load(id) {
    if (this.loaded.has(id) && this.boards.has(id)) return;
    try {
      const data = await getJSON(`${this.base}?node=${id}&levels=1`);
      this.remember(data.node);
      this.boards.set(id, data.board);
    } catch (error) {
      replace(this.el.message, notice(error.describe ? error.describe() : String(error), "error"));
    }
  }

  async select(id) {
    this.selected = id;
    for (const line of this.el.tree.querySelectorAll(".node.selected")) line.classList.remove("selected");
    this.el.tree.querySelector(`li[data-node="${id}"] > .node`)?.classList.add("selected");
    await this.load(id);
    this.showBoard(id);
  }

  showBoard(id) {
    const board = this.boards.get(id);
    const node = this.findNode(id);
    if (!board) {
      replace(this.el.board, h("p", { class: "muted" }, "No board for this node."));
      return;
    }
    const kids = this.loaded.get(id)?.kids || [];
    const scores = {};
    // A move searched twice (a re-search after a failed null window) keeps its last score.
    for (const kid of kids) if (kid.square >= 0) scores[kid.square] = kid.score;
    const pass = kids.find((kid) => kid.move === "pass");
    replace(this.el.caption, node ? `Node ${node.move} (${node.kind}, depth ${node.depth}): children's scores on their squares` : "",
      pass ? `; pass: ${pass.score}` : "");
    replace(this.el.board, renderBoard(board, this.match.game, { scores: kids.length ? scores : null, best: node?.kind === "min" ? "min" : "max" }));
    this.el.board.closest(".board-side").dataset.node = String(id);
  }

  findNode(id) {
    if (this.summary.node.id === id) return this.summary.node;
    for (const node of this.loaded.values()) {
      const kid = node.kids.find((k) => k.id === id);
      if (kid) return kid;
    }
    return null;
  }

  async expandPv() {
    for (const id of this.summary.pv) {
      const li = this.el.tree.querySelector(`li[data-node="${id}"]`);
      if (!li) break;
      const node = this.findNode(id);
      if (node?.children && li.getAttribute("aria-expanded") !== "true") await this.toggle(li, node);
    }
    const last = this.summary.pv[this.summary.pv.length - 1];
    this.el.tree.querySelector(`li[data-node="${last}"]`)?.scrollIntoView({ block: "nearest" });
  }

  collapseAll() {
    replace(this.el.tree, this.item(this.summary.node, false));
  }
}

// The engines' "infinity" bounds (a window not narrowed yet) read better as signs.
function bound(value) {
  const n = Number(value);
  if (Math.abs(n) >= 1e8) return n < 0 ? "\u2212\u221e" : "+\u221e";
  return String(value);
}

function cap(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
