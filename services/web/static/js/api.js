// The page's side of the gateway's API: JSON reads, actions with the person's token, and
// live streams (server-sent events read through fetch, so they can carry the token in a
// header: EventSource cannot, and a token never goes into an address).

const TOKEN_KEY = "arena-token";

/** How long the gateway keeps an answer to share with the next readers while reading is
 *  open (FRESH_S in services/web/shared.py): a read made within this time of an earlier
 *  one may be given that one's answer, from before something that happened since. */
export const SHARED_ANSWER_MS = 1000;

export function getToken() {
  try { return sessionStorage.getItem(TOKEN_KEY) || ""; } catch { return ""; }
}

export function setToken(token) {
  try {
    if (token) sessionStorage.setItem(TOKEN_KEY, token);
    else sessionStorage.removeItem(TOKEN_KEY);
  } catch { /* storage disabled: the token lives as long as the page */ }
  document.dispatchEvent(new CustomEvent("arena-token"));
}

export class ApiError extends Error {
  constructor(status, error) {
    super(error?.message || `request failed (${status})`);
    this.status = status;
    this.code = error?.status || "";
    this.fields = error?.fields || [];
  }

  /** One line for the page, with the bad fields listed. */
  describe() {
    if (!this.fields.length) return this.message;
    return this.fields.map((f) => `${f.field}: ${f.description}`).join("; ");
  }
}

function headers(extra = {}) {
  const token = getToken();
  return token ? { ...extra, authorization: `Bearer ${token}` } : extra;
}

async function failure(response) {
  let body = null;
  try { body = await response.json(); } catch { /* not JSON: a proxy's page */ }
  return new ApiError(response.status, body?.error || { message: `${response.status} ${response.statusText}` });
}

let config = null;

/** The gateway's /api/config, read once a page: its read access, export formats and
 *  every game's variants and boards (the rules library's). */
export function siteConfig() {
  config ??= getJSON("/api/config").catch((error) => { config = null; throw error; });
  return config;
}

export async function getJSON(path) {
  let response;
  try {
    response = await fetch(path, { headers: headers({ accept: "application/json" }) });
  } catch (error) {
    throw new ApiError(0, { message: "the Arena gateway cannot be reached" });
  }
  if (!response.ok) throw await failure(response);
  return response.json();
}

export async function send(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { "content-type": "application/json" }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

/** Fetch a file and save it (works whether or not reading needs a token). */
export async function download(path, fallbackName) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw await failure(response);
  const disposition = response.headers.get("content-disposition") || "";
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] || fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** An image from the API as a blob URL (avatars, when reading needs a token). */
export async function imageURL(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) return null;
  return URL.createObjectURL(await response.blob());
}

// A browser opens at most 6 connections to one site at a time (HTTP/1.1), and a live
// stream holds one for as long as it follows: a 7th live tab, and every read of any Arena
// tab, waited for ever. So the tabs of one browser share LIVE_SLOTS slots (Web Locks): a
// stream follows only while it holds one, and gives it back while its tab is hidden.
const LIVE_SLOTS = 4;

/** Hold the Web Lock ``name``: resolves with the function that gives it back, or null when
 *  ``ifAvailable`` and another holds it; rejects when its ``signal`` aborts the wait. */
function holdLock(name, options) {
  return new Promise((granted, failed) => {
    navigator.locks.request(name, options, (lock) => {
      if (!lock) { granted(null); return undefined; }
      return new Promise((done) => granted(done));
    }).catch(failed);
  });
}

/** A live slot of this browser's: the function that gives it back. ``onWait`` is called
 *  when every slot is taken (it waits for the first one given back); aborting ``signal``
 *  stops the wait (rejects). Without Web Locks (a page not served from a secure or
 *  loopback origin) every stream follows, as before. */
async function takeSlot(signal, onWait) {
  if (!navigator.locks) return () => {};
  for (let i = 0; i < LIVE_SLOTS; i++) {
    const release = await holdLock(`arena-live-${i}`, { ifAvailable: true });
    if (release) return release;
  }
  onWait();
  const asks = Array.from({ length: LIVE_SLOTS }, () => new AbortController());
  const stop = () => asks.forEach((ask) => ask.abort());
  signal.addEventListener("abort", stop);
  let taken = null;
  await Promise.all(asks.map((ask, i) => holdLock(`arena-live-${i}`, { signal: ask.signal })
    .then((release) => {
      if (taken || signal.aborted) { release(); return; }  // granted at once with another
      taken = release;
      stop();
    }, () => {})));
  signal.removeEventListener("abort", stop);
  if (taken && !signal.aborted) return taken;
  taken?.();
  throw new DOMException("stopped", "AbortError");
}

/** What a page says of its live stream's ``state`` ("" for nothing to say). */
export function liveStateText(state, error) {
  if (state === "error") return `Live updates stopped: ${error.describe ? error.describe() : error}`;
  if (state === "reconnecting") return "Connection lost; reconnecting\u2026";
  if (state === "waiting") {
    return "Live updates wait: other Arena tabs of this browser are following live (a browser " +
      "keeps only a few connections to a site). This one follows once one of them is closed or hidden.";
  }
  return "";
}

/**
 * Follow a server-sent-event stream: `handlers[name](data)` for each event, until `end`
 * arrives or `close()` is called. It follows while it holds a live slot (``takeSlot``),
 * and not while its tab is hidden; it reconnects after a dropped connection and when its
 * tab is shown again (the server's streams start from the beginning, which the handlers
 * must tolerate).
 */
export function stream(path, handlers, { onState = () => {} } = {}) {
  let closed = false;
  let active = null; // the AbortController of the slot's wait and the connection
  let retryMs = 2000;

  async function run() {
    if (closed || active || document.visibilityState === "hidden") return;
    const mine = new AbortController();
    active = mine;
    let outcome = "stopped";
    try {
      const release = await takeSlot(mine.signal, () => onState("waiting"));
      try { outcome = await connect(mine.signal); } finally { release(); }
    } catch { /* stopped while it waited for a slot */ }
    if (active === mine) active = null;
    if (outcome === "ended" || outcome === "error") stop();
    if (closed || outcome === "stopped") return;
    onState("reconnecting");
    setTimeout(run, retryMs);
  }

  /** One connection: "ended", "error" (not to retry), "dropped" (a lost connection or a
   *  service gone for a while: retried) or "stopped" (aborted). */
  async function connect(signal) {
    onState("connecting");
    let response;
    try {
      response = await fetch(path, { headers: headers({ accept: "text/event-stream" }), signal });
    } catch {
      return signal.aborted ? "stopped" : "dropped";
    }
    if (!response.ok) {
      const error = await failure(response);
      onState("error", error);
      return error.status >= 500 ? "dropped" : "error";
    }
    onState("open");
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const said = dispatch(block);
          if (said === "end") { onState("ended"); return "ended"; }
          if (said === "error" || said === "dropped") return said;
        }
      }
    } catch { /* dropped, or aborted */ }
    return signal.aborted ? "stopped" : "dropped";
  }

  function dispatch(block) {
    let name = "message", data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") name = value;
      else if (field === "data") data += (data ? "\n" : "") + value;
      else if (field === "retry" && /^\d+$/.test(value)) retryMs = Number(value);
    }
    if (!data) return null;
    const payload = JSON.parse(data);
    if (name === "error") {
      // A service that went away (5xx: a referee restarting) is followed again, as a
      // dropped connection is; it stopped the page for good, the game playing on unseen.
      const error = new ApiError(payload.http_status || 502, payload);
      if (error.status >= 500) return "dropped";
      onState("error", error);
    }
    handlers[name]?.(payload);
    return name === "end" || name === "error" ? name : null;
  }

  function shownOrHidden() {
    if (document.visibilityState === "hidden") active?.abort(); // its slot for the tabs seen
    else run();
  }

  function stop() {
    closed = true;
    active?.abort();
    document.removeEventListener("visibilitychange", shownOrHidden);
  }

  document.addEventListener("visibilitychange", shownOrHidden);
  run();
  return { close: stop };
}
