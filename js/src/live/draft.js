/**
 * The live tail: draft blocks that have not become conversation events yet.
 *
 * Fed by the kernel's custom messages (shapes in messages.js) — `delta` (append to block
 * `index`: answer text, reasoning, or a tool call's arguments drawn as a draft tool card), `released` (blocks that became events: each is handed to its event id), `draft`
 * (replace the streaming blocks; sent after a view's `ready`), `draft_clear` (drop it all).
 * `apply()` only records text; `render()` updates the DOM once per frame.
 *
 * A handed-over block stays where it is until the transcript draws its event and calls
 * `adopt(id)`, which gives it the block's DOM: finished markdown blocks are never parsed again,
 * whatever else is still streaming. A block whose event was drawn without it (the events
 * arrived first, or a tool call: its card is drawn from the event) is let go by `forget()`,
 * so a draft tool card stays until the call's own card is there.
 */
import { reconcile, h } from "../util/dom.js";
import { MessageView } from "../render/blocks.js";
import { ReasoningView } from "../render/reasoning.js";
import { ToolInputView } from "../render/toolcard.js";

/** @typedef {import("../util/stats.js").Stats} Stats */
/** @typedef {import("../render/reasoning.js").Mode} Mode */
/** @typedef {import("../protocol/messages.js").DraftPart} DraftPart */
/** @typedef {import("../protocol/messages.js").DeltaMsg} DeltaMsg */
/** @typedef {import("../protocol/messages.js").DraftMsg} DraftMsg */
/** @typedef {import("../protocol/messages.js").ReleasedMsg} ReleasedMsg */
/** @typedef {import("../protocol/messages.js").DraftClearMsg} DraftClearMsg */
/** @typedef {DeltaMsg | DraftMsg | ReleasedMsg | DraftClearMsg} DraftOp */
/** @typedef {MessageView | ReasoningView | ToolInputView} BlockView */
/** @typedef {{index: number, kind: string, view: BlockView}} Block */

export class Draft {
  /**
   * @param {Stats} stats
   * @param {Mode} mode reasoning display mode
   */
  constructor(stats, mode) {
    this.stats = stats;
    this.mode = mode;
    this.el = h("div", { class: "jt-draft", "aria-live": "polite" });
    /** @type {Map<number, Block>} streaming blocks, by index */
    this.blocks = new Map();
    /** @type {Map<string, Block>} blocks handed to an event not drawn yet, by event id */
    this.handed = new Map();
    this.layoutDirty = false;
  }

  get active() {
    return this.blocks.size > 0 || this.handed.size > 0;
  }

  /** @param {DraftOp} msg */
  apply(msg) {
    if (msg.type === "delta") {
      for (const part of msg.parts ?? []) this.appendPart(part);
    } else if (msg.type === "released") {
      for (const [index, eventId] of msg.blocks ?? []) this.release(index, eventId);
    } else if (msg.type === "draft") {
      this.replace(msg.blocks ?? []);
    } else if (msg.type === "draft_clear") {
      this.blocks.clear();
      this.handed.clear();
      this.layoutDirty = true;
    }
  }

  /** @param {DraftPart} part */
  appendPart(part) {
    this.stats.add("deltas");
    const [index, kind, text] = part;
    let block = this.blocks.get(index);
    if (!block || block.kind !== kind) block = this.create(part);
    block.view.append(String(text ?? ""));
  }

  /**
   * @param {number} index
   * @param {string | null} eventId the event that takes the block over; null drops it
   */
  release(index, eventId) {
    const block = this.blocks.get(index);
    if (!block) return;
    this.blocks.delete(index);
    if (eventId !== null && eventId !== undefined) this.handed.set(String(eventId), block);
    this.layoutDirty = true;
  }

  /** @param {DraftPart[]} parts the whole draft (blocks handed over are not in it) */
  replace(parts) {
    const keep = new Set();
    for (const part of parts) {
      const [index, kind, text] = part;
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
      this.create(part).view.append(full);
    }
    for (const index of [...this.blocks.keys()]) {
      if (!keep.has(index)) this.blocks.delete(index);
    }
    this.layoutDirty = true;
  }

  /**
   * A new, empty block for `part`'s index and kind (a tool call's named by the part).
   * @param {DraftPart} part
   * @returns {Block}
   */
  create(part) {
    const [index, kind] = part;
    const view =
      part[1] === "tool_input"
        ? new ToolInputView(String(part[3] ?? ""), String(part[4] ?? ""))
        : this.newView(kind);
    const block = { index, kind, view };
    this.blocks.set(index, block);
    this.layoutDirty = true;
    return block;
  }

  /** @param {string} kind "message" | "reasoning" */
  newView(kind) {
    return kind === "reasoning"
      ? new ReasoningView(this.mode, this.stats)
      : new MessageView(this.stats);
  }

  /**
   * Take over the view of the block handed to event `eventId`, if it is of `kind` and shows
   * exactly `text` (the event's: what is saved). A block that streamed other text (the kernel
   * redacted the event whole, and something differs) is dropped: the event is drawn from its
   * own text, never from what streamed.
   * @param {string} eventId
   * @param {string} kind "message" | "reasoning"
   * @param {string} text the event's content
   * @returns {MessageView | ReasoningView | null}
   */
  adopt(eventId, kind, text) {
    const block = this.handed.get(eventId);
    if (!block || block.kind !== kind || block.view instanceof ToolInputView) return null;
    this.handed.delete(eventId);
    if (block.view.text() !== text) {
      this.layoutDirty = true;
      this.stats.add("redrawn");
      return null;
    }
    this.layoutDirty = true;
    this.stats.add("adopted");
    return block.view;
  }

  /**
   * Let go of handed-over blocks whose event has been drawn without them.
   * @param {(eventId: string) => boolean} drawn
   */
  forget(drawn) {
    for (const eventId of [...this.handed.keys()]) {
      if (!drawn(eventId)) continue;
      this.handed.delete(eventId);
      this.layoutDirty = true;
    }
  }

  /**
   * The reasoning display mode changed: rebuild reasoning blocks from their text.
   * @param {Mode} mode
   */
  setMode(mode) {
    this.mode = mode;
    for (const block of [...this.handed.values(), ...this.blocks.values()]) {
      if (block.kind !== "reasoning") continue;
      const text = block.view.text();
      block.view = this.newView("reasoning");
      block.view.append(text);
    }
    this.layoutDirty = true;
  }

  /** Bring the DOM up to date; call once per frame, after the transcript had its adoptions. */
  render() {
    const streaming = [...this.blocks.values()].sort((a, b) => a.index - b.index);
    const ordered = [...this.handed.values(), ...streaming];
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
