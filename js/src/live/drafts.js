/**
 * Every live draft of a view: the top level's, and one per running sub-agent, keyed by the
 * `parent` (call id) its draft messages carry. Each is a Draft (draft.js) with its own block
 * indexes. A sub-agent's draft is kept from its first message, whether or not its call's card
 * exists yet; the transcript puts its element into the card (`Transcript.placeDrafts`) once
 * it does. A top-level `draft_clear` (Abort) drops the sub-agents' drafts too.
 */
import { parentOf } from "../util/nested.js";

/** @typedef {import("./draft.js").Draft} Draft */
/** @typedef {import("./draft.js").DraftOp} DraftOp */
/** @typedef {import("../render/reasoning.js").Mode} Mode */
/** @typedef {import("../protocol/types.js").ConvEvent} ConvEvent */

export class Drafts {
  /** @param {() => Draft} make a new, empty draft */
  constructor(make) {
    this.make = make;
    this.top = make();
    /** @type {Map<string, Draft>} sub-agents' drafts, by call id */
    this.nested = new Map();
  }

  /**
   * The draft of `parent` (null: the top level), made if there is none.
   * @param {string | null} parent
   * @returns {Draft}
   */
  of(parent) {
    if (parent === null) return this.top;
    let draft = this.nested.get(parent);
    if (!draft) {
      draft = this.make();
      this.nested.set(parent, draft);
    }
    return draft;
  }

  /** @param {DraftOp} msg */
  apply(msg) {
    const parent = parentOf(msg);
    if (parent === null && msg.type === "draft_clear") {
      for (const draft of this.nested.values()) draft.apply(msg);
    }
    this.of(parent).apply(msg);
  }

  /**
   * The view of the block handed to `event`, from its own transcript's draft.
   * @param {ConvEvent} event
   * @param {string} kind "message" | "reasoning"
   */
  adopt(event, kind) {
    const parent = parentOf(event);
    const draft = parent === null ? this.top : this.nested.get(parent);
    const text = typeof event.content === "string" ? event.content : "";
    return draft ? draft.adopt(String(event.id), kind, text) : null;
  }

  /**
   * Let go of handed-over blocks whose event has been drawn without them, then of the
   * sub-agents' drafts that hold nothing any more (their element leaves the card).
   * @param {(eventId: string) => boolean} drawn
   */
  forget(drawn) {
    this.top.forget(drawn);
    for (const [parent, draft] of [...this.nested]) {
      draft.forget(drawn);
      if (draft.active) continue;
      draft.el.remove();
      this.nested.delete(parent);
    }
  }

  /** @param {Mode} mode */
  setMode(mode) {
    for (const draft of this.all()) draft.setMode(mode);
  }

  render() {
    for (const draft of this.all()) draft.render();
  }

  /** @returns {[string | null, Draft][]} every draft, the top level's first */
  entries() {
    return [[null, this.top], ...this.nested];
  }

  all() {
    return [this.top, ...this.nested.values()];
  }
}
