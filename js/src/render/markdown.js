/**
 * Markdown → sanitized DOM. The only place where HTML strings exist, and every one of them
 * goes through DOMPurify before it becomes DOM.
 *
 * Policy: HTML profile only (no SVG/MathML), no `style`, no forms; links open in a new tab
 * with rel="noopener noreferrer"; `id`/`name` are prefixed (no DOM clobbering); images load
 * only from `data:image/...` — a remote image is shown as a link instead (and audio/video are
 * dropped), because fetching it
 * would let injected text send data to any server without a click.
 */
import { Marked } from "marked";
import DOMPurify from "dompurify";

const marked = new Marked({ gfm: true, breaks: false, async: false });

/** @typedef {ReturnType<typeof marked.lexer>} TokensList */
/** @typedef {TokensList[number]} Token */
/** @typedef {TokensList["links"]} Links */

/** @type {ReturnType<typeof DOMPurify> | null} */
let purifier = null;

const PURIFY_CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [
    "style",
    "form",
    "button",
    "textarea",
    "select",
    "option",
    "dialog",
    "template",
    "video",
    "audio",
    "source",
    "track",
    "picture",
  ],
  FORBID_ATTR: ["style", "srcset", "action", "formaction"],
  SANITIZE_NAMED_PROPS: true,
  RETURN_DOM_FRAGMENT: true,
};

function purify() {
  // A private instance, so our configuration never touches another library's DOMPurify.
  purifier ??= DOMPurify(window);
  return purifier;
}

/**
 * Split markdown into top-level tokens; `tokens.links` holds the reference definitions.
 * @param {string} src
 * @returns {TokensList}
 */
export function lex(src) {
  return marked.lexer(src);
}

/**
 * Render top-level tokens to a sanitized fragment.
 * @param {Token[]} tokens
 * @param {Links} links reference definitions known so far
 * @returns {DocumentFragment}
 */
export function renderTokens(tokens, links) {
  const list = /** @type {TokensList} */ (/** @type {unknown} */ ([...tokens]));
  list.links = links;
  const html = /** @type {string} */ (marked.parser(list));
  return sanitizeHtml(html);
}

/**
 * Sanitize an HTML string into a fragment with our link and image policy applied.
 * @param {string} html
 * @returns {DocumentFragment}
 */
export function sanitizeHtml(html) {
  const fragment = /** @type {DocumentFragment} */ (
    /** @type {unknown} */ (purify().sanitize(html, PURIFY_CONFIG))
  );
  harden(fragment);
  return fragment;
}

/** @param {DocumentFragment} fragment */
function harden(fragment) {
  for (const a of fragment.querySelectorAll("a")) {
    if (a.hasAttribute("href")) {
      a.setAttribute("target", "_blank");
      a.setAttribute("rel", "noopener noreferrer");
    }
  }
  for (const img of fragment.querySelectorAll("img")) {
    const src = img.getAttribute("src") ?? "";
    if (/^data:image\/(png|jpe?g|gif|webp);/i.test(src)) continue;
    const label = `image: ${img.getAttribute("alt") || src || "(no source)"}`;
    const replacement = document.createElement(/^https?:/i.test(src) ? "a" : "span");
    replacement.className = "jt-blocked-image";
    replacement.textContent = label;
    if (/^https?:/i.test(src)) {
      replacement.setAttribute("href", src);
      replacement.setAttribute("target", "_blank");
      replacement.setAttribute("rel", "noopener noreferrer");
      replacement.setAttribute("title", "Remote image not loaded; click to open it");
    }
    img.replaceWith(replacement);
  }
  for (const input of fragment.querySelectorAll("input")) {
    // GFM task lists are the only inputs markdown produces; keep them inert.
    if (input.getAttribute("type") === "checkbox") input.setAttribute("disabled", "");
    else input.remove();
  }
}
