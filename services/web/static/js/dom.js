// Building the page safely: every string goes into the document as text (a text node or
// an attribute value), never as markup. No page uses innerHTML with data, so a bot named
// "<script>" is shown as those characters.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(element, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") element.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (key === "dataset") Object.assign(element.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") element.addEventListener(key.slice(2), value);
    else if (key === "value" && "value" in element) element.value = value;
    else if (key === "checked" || key === "selected" || key === "disabled") element[key] = Boolean(value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

/** Append children: strings and numbers become text nodes; arrays are flattened. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** An HTML element: h("a", {href: "/x", class: "y"}, "text", otherNode). */
export function h(tag, attrs = {}, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element, same calling convention. */
export function s(tag, attrs = {}, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

export function clear(element) {
  while (element.firstChild) element.firstChild.remove();
  return element;
}

export function replace(element, ...children) {
  return append(clear(element), children);
}

// -- formatting ------------------------------------------------------------------------

export function int(n) {
  return typeof n === "number" ? n.toLocaleString("en-US") : String(n ?? "");
}

export function signed(n, digits = 0) {
  if (n === null || n === undefined || !Number.isFinite(n)) return "\u2014";  // no games yet
  const text = Math.abs(n).toFixed(digits);
  if (Number(text) === 0) return (0).toFixed(digits);
  return (n < 0 ? "\u2212" : "+") + text;
}

export function pct(n) {
  if (n === null || n === undefined) return "\u2014";
  return `${n.toFixed(1)}%`;
}

export function ago(iso) {
  if (!iso) return "";
  const seconds = (Date.now() - Date.parse(iso)) / 1000;
  if (!Number.isFinite(seconds)) return "";
  if (seconds < 60) return "just now";
  const units = [[86400 * 365, "year"], [86400 * 30, "month"], [86400, "day"], [3600, "hour"], [60, "minute"]];
  for (const [size, name] of units) {
    if (seconds >= size) {
      const count = Math.floor(seconds / size);
      return `${count} ${name}${count === 1 ? "" : "s"} ago`;
    }
  }
  return "";
}

export function timeCell(iso) {
  return h("time", { datetime: iso || "", title: iso ? new Date(iso).toLocaleString() : "" }, ago(iso));
}

export function duration(seconds) {
  seconds = Math.max(0, Math.round(seconds));
  const m = Math.floor(seconds / 60), sec = seconds % 60, hours = Math.floor(m / 60);
  const pad = (v) => String(v).padStart(2, "0");
  return hours ? `${hours}:${pad(m % 60)}:${pad(sec)}` : `${m}:${pad(sec)}`;
}

export function badge(status, extra = "") {
  return h("span", { class: ["badge", status, extra] }, status);
}

export function progressBar(done, total) {
  const fraction = total ? Math.min(1, done / total) : 1;
  const bar = h("div");
  bar.style.width = `${(fraction * 100).toFixed(1)}%`;
  return h("div", {
    class: ["progress", done >= total && "done"], role: "progressbar",
    "aria-valuemin": 0, "aria-valuemax": total, "aria-valuenow": done,
  }, bar);
}

/** One page of a paged list into ``container``: the first page replaces it with a table of
 * ``headers`` (or ``empty``'s sentence), a later one adds its rows; then "Load more", which
 * calls ``more``, while the API says another page follows (``note``: a word beside it). */
export function pageOfRows(container, { first, headers, rows, empty, nextToken, more, note = null }) {
  if (first) {
    replace(container, rows.length ? table(headers, rows) : h("p", { class: "empty" }, empty));
  } else {
    container.querySelector("tbody")?.append(...rows);
  }
  container.querySelector(".more-button")?.remove();
  if (nextToken) {
    container.append(h("div", { class: "row more-button" },
      h("button", { onclick: () => more(nextToken) }, "Load more"), note));
  }
}

export function table(headers, rows, attrs = {}) {
  const head = h("thead", {}, h("tr", {}, headers.map((header) =>
    typeof header === "string" ? h("th", {}, header) : h("th", header.attrs || {}, header.text))));
  return h("div", { class: "table-wrap" }, h("table", attrs, head, h("tbody", {}, rows)));
}

export function notice(text, kind = "") {
  return h("div", { class: ["notice", kind], role: kind === "error" ? "alert" : "status" }, text);
}

/** A match's player: its bot's link, or for an imported record (whose players name no
 * bot: anyone may import one naming any bot) the name as plain text. */
export function playerLink(match, label) {
  return match.imported_from ? h("span", { class: "imported-player" }, label) : botLink(label);
}

/** A link to a bot's page (names may hold any printable character). ``NAME@N`` (a
 * version, as standings, rating lists and matches name the one that played) links to
 * that version's page: the bot's latest may be another, with another configuration. A
 * name holds no ``@`` (the registry refuses one), so the suffix is always a version. */
export function botLink(label) {
  const [, name, version] = /^(.*)@(\d+)$/.exec(label) || [label, label, ""];
  const query = version ? `?version=${version}` : "";
  return h("a", { href: `/bots/${encodeURIComponent(name)}${query}` }, label);
}

/** The distinctive end of an id ("1795461122783-31516f6b" -> "31516f6b"). */
export function shortId(id) {
  const tail = id.split("-").pop();
  return tail.length >= 4 ? tail : id.slice(-8);
}

export function matchLink(id, text) {
  return h("a", { href: `/matches/${encodeURIComponent(id)}`, class: "mono", title: id }, text ?? shortId(id));
}

export function ladderLink(id, text) {
  return h("a", { href: `/ladders/${encodeURIComponent(id)}`, title: id }, text || `ladder ${shortId(id)}`);
}

export function setTitle(...parts) {
  document.title = [...parts.filter(Boolean), "Arena"].join(" \u00b7 ");
}
