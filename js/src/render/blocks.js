/**
 * Renderers for the simple transcript events: the user's request (and its attachments), an
 * assistant message, notices, errors and opaque provider blocks. Tool cards live in
 * toolcard.js, reasoning in reasoning.js, images in images.js.
 */
import { blockType } from "../protocol/fields.js";
import { formatCount, h, prettyJson } from "../util/dom.js";
import { renderImages } from "./images.js";
import { MarkdownStream } from "./stream.js";

/** @typedef {import("../util/stats.js").Stats} Stats */
/** @typedef {import("../protocol/types.js").ConvEvent} ConvEvent */
/** @typedef {import("../protocol/types.js").BlockEvent} BlockEvent */

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
 * @param {import("../protocol/types.js").ChatRequestEvent} event
 * @param {Stats} stats
 * @param {string} [who] the label: "You", or "Task" for a sub-agent's request
 */
export function renderRequest(event, stats, who = "You") {
  const md = new MarkdownStream(stats);
  md.append(typeof event.content === "string" ? event.content : prettyJson(event.content));
  md.finish();
  return h(
    "div",
    { class: "jt-request" },
    h("div", { class: "jt-who" }, who),
    md.el,
    renderAttachments(event.attachments),
  );
}

/**
 * What was sent with a request (`@name` variables, a note about the kernel): a line naming
 * them, then each one folded, its text and images inside. Null when there are none.
 * @param {unknown} attachments
 * @returns {HTMLElement | null}
 */
export function renderAttachments(attachments) {
  if (!Array.isArray(attachments) || attachments.length === 0) return null;
  const items = attachments.map((a) => (a && typeof a === "object" ? a : {}));
  return h(
    "div",
    { class: "jt-attachments" },
    h(
      "div",
      { class: "jt-attached jt-muted" },
      `Attached: ${items.map(attachmentLabel).join(", ")}`,
    ),
    items.map(renderAttachment),
  );
}

/** @param {Record<string, unknown>} attachment */
function attachmentLabel(attachment) {
  return typeof attachment.label === "string" && attachment.label ? attachment.label : "(unnamed)";
}

/**
 * One attachment, collapsed: its label and source, then its text and images.
 * @param {Record<string, unknown>} attachment
 */
function renderAttachment(attachment) {
  const source = typeof attachment.source === "string" ? attachment.source : "";
  const text = typeof attachment.text === "string" ? attachment.text : "";
  return h(
    "details",
    { class: "jt-fold jt-attachment" },
    h(
      "summary",
      null,
      attachmentLabel(attachment),
      source ? h("span", { class: "jt-muted" }, ` · ${source}`) : null,
    ),
    text ? h("pre", null, text) : null,
    renderImages(attachment.images),
  );
}

/** @param {import("../protocol/types.js").NoticeEvent} event */
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

/** @param {import("../protocol/types.js").ErrorEvent} event */
export function renderError(event) {
  return h(
    "div",
    { class: "jt-error", role: "alert" },
    h("strong", null, String(event.error_type || "Error")),
    h("pre", null, String(event.message ?? "")),
  );
}

/** @param {BlockEvent} event */
export function renderOpaqueBlock(event) {
  const metadata = event.metadata && typeof event.metadata === "object" ? event.metadata : {};
  const type = blockType(event);
  if (type === "compaction") return renderCompaction(metadata);
  const label = type === "redacted_thinking" ? "redacted reasoning block" : `${type} block`;
  const title = prettyJson(metadata);
  return h(
    "div",
    { class: "jt-opaque jt-muted", title: title.length > 600 ? `${title.slice(0, 600)}…` : title },
    label,
  );
}

/**
 * A compaction block: "Earlier conversation summarized", the sizes before and after, and the
 * summary the model now reads in place of the earlier conversation (folded).
 * @param {NonNullable<BlockEvent["metadata"]>} metadata
 */
export function renderCompaction(metadata) {
  const raw = /** @type {{content?: unknown}} */ (metadata.raw_block ?? {});
  const note =
    metadata.compaction && typeof metadata.compaction === "object" ? metadata.compaction : {};
  if (typeof raw.content !== "string") {
    return h(
      "div",
      { class: "jt-compaction jt-muted" },
      "A compaction returned no summary: nothing was changed.",
    );
  }
  const sizes = [];
  if (typeof note.tokens_before === "number")
    sizes.push(`${formatCount(note.tokens_before)} tokens`);
  if (typeof note.tokens_after === "number")
    sizes.push(`a summary of ≈ ${formatCount(note.tokens_after)} tokens`);
  return h(
    "details",
    { class: "jt-fold jt-compaction" },
    h(
      "summary",
      null,
      `Earlier conversation summarized${sizes.length ? `: ${sizes.join(" → ")}` : ""}`,
    ),
    h("pre", null, raw.content),
  );
}

/** @param {ConvEvent} event */
export function renderUnknown(event) {
  return h("div", { class: "jt-opaque jt-muted" }, `unsupported event: ${String(event.kind)}`);
}
