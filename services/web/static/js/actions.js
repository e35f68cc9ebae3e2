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

/** A key that makes a create idempotent: a form sent twice (a double click, a retry after
 *  a lost answer) creates one thing. getRandomValues works on plain-http pages too. */
export function newRequestId() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}
