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

/**
 * Follow a server-sent-event stream: `handlers[name](data)` for each event. Reconnects
 * after a dropped connection (the server's streams start from the beginning, which the
 * handlers must tolerate) until `end` arrives or `close()` is called.
 */
export function stream(path, handlers, { onState = () => {} } = {}) {
  let closed = false;
  let controller = null;
  let retryMs = 2000;

  async function connect() {
    controller = new AbortController();
    onState("connecting");
    let response;
    try {
      response = await fetch(path, { headers: headers({ accept: "text/event-stream" }), signal: controller.signal });
    } catch {
      return again();
    }
    if (!response.ok) {
      const error = await failure(response);
      onState("error", error);
      if (error.status >= 500) return again();
      return;
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
          if (dispatch(block) === "end") { closed = true; onState("ended"); return; }
        }
      }
    } catch { /* dropped: reconnect below */ }
    again();
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
    if (name === "error") onState("error", new ApiError(502, payload));
    handlers[name]?.(payload);
    return name === "end" || name === "error" ? "end" : null;
  }

  function again() {
    if (closed) return;
    onState("reconnecting");
    setTimeout(() => { if (!closed) connect(); }, retryMs);
  }

  connect();
  return { close() { closed = true; controller?.abort(); } };
}
