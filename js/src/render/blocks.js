/**
 * Renderers for the simple transcript events: the user's request, an assistant message,
 * notices, errors and opaque provider blocks. Tool cards live in toolcard.js, reasoning in
 * reasoning.js.
 */
import { blockType } from "../fields.js";
import { h, prettyJson } from "../dom.js";
import { MarkdownStream } from "./stream.js";

/** @typedef {import("../stats.js").Stats} Stats */
/** @typedef {import("../types.js").ConvEvent} ConvEvent */

/** An assistant message, streaming (draft) or saved (event): same DOM either way. */
export class MessageView {
  /** @param {Stats} stats */
  constructor(stats) {
    this.md = new MarkdownStream(stats);
    this.el = h("div", { class: "jt-message" }, this.md.el);
    this.finished = false;
  }

  get length() {
    return this.md.length;
  }

  /** @param {string} chunk */
  append(chunk) {
    this.md.append(chunk);
  }

  text() {
    return this.md.text();
  }

  render() {
    this.md.render();
  }

  /** @param {{partial?: boolean} | null | undefined} metadata */
  finish(metadata) {
    this.md.finish();
    this.finished = true;
    if (metadata?.partial === true) {
      this.el.appendChild(h("div", { class: "jt-partial" }, "answer stopped here"));
    }
  }
}

/**
 * @param {ConvEvent} event
 * @param {Stats} stats
 */
export function renderRequest(event, stats) {
  const md = new MarkdownStream(stats);
  md.append(typeof event.content === "string" ? event.content : prettyJson(event.content));
  md.finish();
  return h("div", { class: "jt-request" }, h("div", { class: "jt-who" }, "You"), md.el);
}

/** @param {ConvEvent} event */
export function renderNotice(event) {
  const level = event.level === "warning" ? "warning" : "info";
  return h(
    "div",
    { class: `jt-notice jt-notice-${level}`, role: level === "warning" ? "status" : null },
    h("span", { class: "jt-notice-icon", "aria-hidden": "true" }, level === "warning" ? "⚠" : "ℹ"),
    " ",
    String(event.text ?? ""),
  );
}

/** @param {ConvEvent} event */
export function renderError(event) {
  return h(
    "div",
    { class: "jt-error", role: "alert" },
    h("strong", null, String(event.error_type || "Error")),
    h("pre", null, String(event.message ?? "")),
  );
}

/** @param {ConvEvent} event */
export function renderOpaqueBlock(event) {
  const metadata = event.metadata && typeof event.metadata === "object" ? event.metadata : {};
  const type = blockType(event);
  const label = type === "redacted_thinking" ? "redacted reasoning block" : `${type} block`;
  const title = prettyJson(metadata);
  return h(
    "div",
    { class: "jt-opaque jt-muted", title: title.length > 600 ? `${title.slice(0, 600)}…` : title },
    label,
  );
}

/** @param {ConvEvent} event */
export function renderUnknown(event) {
  return h("div", { class: "jt-opaque jt-muted" }, `unsupported event: ${String(event.kind)}`);
}
