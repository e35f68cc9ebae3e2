// Actions (create, cancel, delete) are done as the person: with the token they entered
// once in the page. Without one, the token dialog opens first.

import { getToken } from "./api.js";

/** Open the token dialog; resolves once it is closed (with or without a token). */
export function askToken() {
  const dialog = document.getElementById("token-dialog");
  if (!dialog.open) dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => setTimeout(() => resolve(getToken())), { once: true });
  });
}

/** Run `action` with a token: ask for one first if there is none, and once more if the
 *  services refuse it (401). Other errors reach the caller. */
export async function act(action) {
  if (!getToken() && !(await askToken())) return null;
  try {
    return await action();
  } catch (error) {
    if (error.status !== 401) throw error;
    if (!(await askToken())) throw error;
    return action();
  }
}

/** Keys that make a form's creates idempotent: the same body sent again (a double click,
 *  a retry after a lost answer) goes with the same key, so one thing is made; a body
 *  edited since gets a new one (the services refuse a key sent with another request).
 *  getRandomValues works on plain-http pages too. */
export function requestKeys() {
  let sent = null, key = null;
  return (body) => {
    const text = JSON.stringify(body);
    if (text !== sent) {
      sent = text;
      key = [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
    }
    return key;
  };
}
