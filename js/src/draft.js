/**
 * The live tail: draft blocks that have not become conversation events yet.
 *
 * Fed by the kernel's custom messages — `delta` (append to block `index`), `draft` (replace
 * the whole draft; sent once after the view's `ready`), `draft_clear` (drop it). `apply()`
 * only records text; `render()` updates the DOM once per frame.
 *
 * When a block becomes an event, the transcript calls `adopt(kind, content)`: a block with
 * the same text hands over its DOM (finished markdown blocks are never parsed again). Blocks
 * dropped by `draft_clear` stay adoptable until the end of the same frame, so the kernel may
 * publish the events before or after the clear.
 */
import { reconcile, h } from "./dom.js";
import { MessageView } from "./render/blocks.js";
import { ReasoningView, sameMode } from "./render/reasoning.js";

/** @typedef {import("./stats.js").Stats} Stats */
/** @typedef {import("./render/reasoning.js").Mode} Mode */
/** @typedef {import("./messages.js").DraftPart} DraftPart */
/** @typedef {import("./messages.js").DeltaMsg} DeltaMsg */
/** @typedef {import("./messages.js").DraftMsg} DraftMsg */
/** @typedef {import("./messages.js").DraftClearMsg} DraftClearMsg */
/** @typedef {DeltaMsg | DraftMsg | DraftClearMsg} DraftOp */
/** @typedef {{index: number, kind: string, view: MessageView | ReasoningView}} Block */

export class Draft {
  /**
   * @param {Stats} stats
   * @param {Mode} mode reasoning display mode
   */
  constructor(stats, mode) {
    this.stats = stats;
    this.mode = mode;
    this.el = h("div", { class: "jt-draft", "aria-live": "polite" });
    /** @type {Map<number, Block>} */
    this.blocks = new Map();
    /** @type {Block[]} cleared this frame, still adoptable */
    this.pool = [];
    this.layoutDirty = false;
  }

  get active() {
    return this.blocks.size > 0;
  }

  /** @param {DraftOp} msg */
  apply(msg) {
    if (msg.type === "delta") {
      for (const part of msg.parts ?? []) this.appendPart(part);
    } else if (msg.type === "draft") {
      this.replace(msg.blocks ?? []);
    } else if (msg.type === "draft_clear") {
      this.pool.push(...this.blocks.values());
      this.blocks.clear();
      this.layoutDirty = true;
    }
  }

  /** @param {DraftPart} part */
  appendPart([index, kind, text]) {
    this.stats.add("deltas");
    let block = this.blocks.get(index);
    if (!block || block.kind !== kind) block = this.create(index, kind);
    block.view.append(String(text ?? ""));
  }

  /** @param {DraftPart[]} parts */
  replace(parts) {
    const keep = new Set();
    for (const [index, kind, text] of parts) {
      this.stats.add("deltas");
      const full = String(text ?? "");
      keep.add(index);
      const block = this.blocks.get(index);
      if (block && block.kind === kind) {
        const have = block.view.text();
        // A second view's `ready` re-sends the draft to every view: usually just more text.
        if (full.startsWith(have)) {
          block.view.append(full.slice(have.length));
          continue;
        }
      }
      this.create(index, kind).view.append(full);
    }
    for (const index of [...this.blocks.keys()]) {
      if (!keep.has(index)) this.blocks.delete(index);
    }
    this.layoutDirty = true;
  }

  /**
   * @param {number} index
   * @param {string} kind
   * @returns {Block}
   */
  create(index, kind) {
    const view =
      kind === "reasoning" ? new ReasoningView(this.mode, this.stats) : new MessageView(this.stats);
    const block = { index, kind, view };
    this.blocks.set(index, block);
    this.layoutDirty = true;
    return block;
  }

  /**
   * Take over the view of a block whose text equals a new event's content.
   * @param {string} kind "message" | "reasoning"
   * @param {string} content
   * @returns {MessageView | ReasoningView | null}
   */
  adopt(kind, content) {
    const normalized = content.replace(/\r\n?/g, "\n");
    const matches = (/** @type {Block} */ b) =>
      b.kind === kind &&
      (kind !== "reasoning" || sameMode(/** @type {ReasoningView} */ (b.view).mode, this.mode)) &&
      (b.view.length === content.length || b.view.length === normalized.length) &&
      (b.view.text() === content || b.view.text() === normalized);
    for (const [index, block] of [...this.blocks].sort((a, b) => a[0] - b[0])) {
      if (matches(block)) {
        this.blocks.delete(index);
        this.layoutDirty = true;
        this.stats.add("adopted");
        return block.view;
      }
    }
    const pooled = this.pool.findIndex(matches);
    if (pooled >= 0) {
      this.stats.add("adopted");
      return this.pool.splice(pooled, 1)[0].view;
    }
    return null;
  }

  /**
   * The reasoning display mode changed: rebuild live reasoning blocks from their text.
   * @param {Mode} mode
   */
  setMode(mode) {
    this.mode = mode;
    for (const block of this.blocks.values()) {
      if (block.kind !== "reasoning") continue;
      const text = block.view.text();
      this.create(block.index, "reasoning").view.append(text);
    }
  }

  /** Bring the DOM up to date; call once per frame, after the transcript had its adoptions. */
  render() {
    this.pool = [];
    const ordered = [...this.blocks.values()].sort((a, b) => a.index - b.index);
    if (this.layoutDirty) {
      reconcile(
        this.el,
        ordered.map((b) => b.view.el),
      );
      this.layoutDirty = false;
    }
    for (const block of ordered) block.view.render();
  }
}
