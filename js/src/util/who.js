/**
 * Who clicked: the identity this page reports with every answer and Stop, and the name a saved
 * decision shows. JupyterLab / Notebook 7 know the current user (`app.serviceManager.user`); the
 * lab extension exposes it as `window.__jupyter_turns_user()` because the widget's view has no
 * app. Without it (another front end, no extension) the page says "you". A label, never a
 * permission: the kernel sanitizes it before saving, and it is only ever drawn as text.
 */

const MAX_CHARS = 80; // the kernel's cap too (jupyter_turns/model/events.py, WHO_MAX_CHARS)

/** @typedef {import("../protocol/messages.js").PageUser} PageUser */

/**
 * One line of plain text, capped; "" for anything else.
 * @param {unknown} value
 * @returns {string}
 */
function label(value) {
  if (typeof value !== "string") return "";
  // control and format characters (newlines, bidi overrides) out, runs of spaces joined
  return value
    .replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\s]+/gu, " ")
    .trim()
    .slice(0, MAX_CHARS)
    .trim();
}

/**
 * The page's current user: JupyterLab's identity (its `name`, else `display_name`, and its
 * `username`), or "you" when the page knows nobody.
 * @returns {PageUser}
 */
export function pageUser() {
  /** @type {any} */
  let identity = null;
  try {
    const read = /** @type {any} */ (globalThis).__jupyter_turns_user;
    identity = typeof read === "function" ? read() : null;
  } catch {
    identity = null; // a broken registry names nobody
  }
  const username = label(identity?.username);
  const name = label(identity?.name) || label(identity?.display_name) || username;
  return name ? { name, username } : { name: "you", username: "" };
}

/**
 * The name a saved decision or undo names as the person who clicked; null for none (a policy's
 * decision, an older record).
 * @param {unknown} who the saved `who` field
 * @returns {string | null}
 */
export function whoName(who) {
  const name = label(/** @type {any} */ (who)?.name);
  return name || null;
}
