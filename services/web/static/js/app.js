// The shell: picks the page from the address, wires the theme toggle and the token dialog.
// Pages are modules with one function each, given the <main> element and the address's
// parts; links between pages are ordinary links.

import { askToken } from "./actions.js";
import { ApiError, getToken, setToken, siteConfig } from "./api.js";
import { h, notice, replace, setTitle } from "./dom.js";

const ROUTES = [
  [/^\/$/, "ladders", "ladderList"],
  [/^\/ladders\/?$/, "ladders", "ladderList"],
  [/^\/ladders\/([^/]+)\/?$/, "ladders", "ladderPage"],
  [/^\/ratings\/?$/, "ratings", "ratingList"],
  [/^\/bots\/?$/, "bots", "botList"],
  [/^\/bots\/(.+)$/, "bots", "botPage"],
  [/^\/matches\/?$/, "matches", "matchList"],
  [/^\/matches\/([^/]+)\/?$/, "match", "matchPage"],
  [/^\/matches\/([^/]+)\/tree\/(\d+)\/?$/, "tree", "treePage"],
  [/^\/editor\/?$/, "editor", "editorPage"],
];

const THEME_KEY = "arena-theme";
const systemDark = window.matchMedia("(prefers-color-scheme: dark)");

function storedTheme() {
  try { return localStorage.getItem(THEME_KEY); } catch { return null; }
}

export function currentTheme() {
  const stored = storedTheme();
  if (stored === "dark" || stored === "light") return stored;
  return systemDark.matches ? "dark" : "light";
}

function applyTheme(theme) {
  try {
    if (theme) localStorage.setItem(THEME_KEY, theme);
    else localStorage.removeItem(THEME_KEY);
  } catch { /* storage disabled: this page only */ }
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
  showThemeStatus();
}

function showThemeStatus() {
  const status = document.getElementById("theme-status");
  const stored = storedTheme();
  const follow = h("button", { type: "button", onclick: () => applyTheme(null) }, "follow the system");
  replace(status, stored ? [`${stored} theme (remembered) \u00b7 `, follow]
    : `${currentTheme()} theme (following the system)`);
  const toggle = document.getElementById("theme-toggle");
  toggle.setAttribute("aria-pressed", String(currentTheme() === "dark"));
  toggle.querySelector(".theme-icon").textContent = currentTheme() === "dark" ? "\u2600" : "\u263e";
}

function setupTheme() {
  document.getElementById("theme-toggle").addEventListener("click", () => {
    applyTheme(currentTheme() === "dark" ? "light" : "dark");
  });
  systemDark.addEventListener("change", showThemeStatus);
  showThemeStatus();
}

function setupToken() {
  const button = document.getElementById("token-button");
  const dialog = document.getElementById("token-dialog");
  const input = document.getElementById("token-input");
  const show = () => {
    const set = Boolean(getToken());
    button.textContent = set ? "Token \u2713" : "Token";
    button.classList.toggle("on", set);
  };
  button.addEventListener("click", () => askToken());
  dialog.addEventListener("close", () => {
    if (dialog.returnValue === "save") setToken(input.value.trim());
    else if (dialog.returnValue === "forget") setToken("");
    input.value = "";
  });
  document.addEventListener("arena-token", show);
  show();
}

async function route() {
  const main = document.getElementById("main");
  const path = location.pathname;
  for (const [pattern, module, name] of ROUTES) {
    const found = pattern.exec(path);
    const args = found && decodedParts(found.slice(1));
    if (!args) continue;
    document.querySelector(`[data-nav="${module === "match" || module === "tree" ? "matches" : module}"]`)
      ?.classList.add("active");
    try {
      const page = await import(`./pages/${module}.js`);
      await page[name](main, ...args);
    } catch (error) {
      showError(main, error);
    }
    return;
  }
  setTitle("Not found");
  replace(main, h("h1", {}, "Not found"), h("p", {}, "No page here. ", h("a", { href: "/" }, "Back to the ladders")));
}

/** The address's parts as text, or null when one is no UTF-8 percent-encoding
 * (`/bots/%E0%A4%A`: no such page, rather than a page left loading). */
function decodedParts(parts) {
  try {
    return parts.map(decodeURIComponent);
  } catch {
    return null;
  }
}

/** A failed load, said plainly; a missing token opens the token dialog. */
export function showError(main, error) {
  const text = error.describe ? error.describe() : String(error.message || error);
  if (error.status === 401) {
    replace(main, notice(`Reading needs a token here: ${text}`, "error"),
      h("button", { class: "primary", onclick: async () => { await askToken(); location.reload(); } }, "Enter token"));
    return;
  }
  if (error.status === 404 || error.status === 400) {  // no such thing, or a bad address
    const title = error.status === 404 ? "Not found" : "Bad address";
    setTitle(title);
    replace(main, h("h1", {}, title), notice(text, "error"), h("p", {}, h("a", { href: "/" }, "Back to the ladders")));
    return;
  }
  if (!(error instanceof ApiError)) console.error(error);  // the page's own fault, not an answer
  replace(main, notice(text, "error"));
}

async function start() {
  setupTheme();
  setupToken();
  try {
    const config = await siteConfig();
    document.documentElement.dataset.readAccess = config.read_access;
  } catch { /* the page says what failed when it loads its own data */ }
  await route();
  document.body.dataset.ready = "1";
}

start();
