/**
 * ChatView: one rendered view of a ChatWidget model. Listens to the synced traits and the
 * draft messages, batches everything into one flush per animation frame, and sends every
 * user action with `model.send` (never `model.set`, see docs/architecture.md, "Facts the design depends on").
 */
import { h } from "../util/dom.js";
import { Draft } from "./draft.js";
import { Drafts } from "./drafts.js";
import { subagentTotals } from "../util/nested.js";
import { Prompts } from "./prompts.js";
import { parseMode, sameMode } from "../render/reasoning.js";
import { StatusBar, isActive, renderFooter } from "../render/status.js";
import { Transcript } from "../render/transcript.js";
import { Stats } from "../util/stats.js";
import { pageUser } from "../util/who.js";

/** @typedef {import("../protocol/types.js").Model} Model */
/** @typedef {import("./draft.js").DraftOp} DraftOp */
/** @typedef {import("../protocol/messages.js").PageMessage} PageMessage */

const TRAITS = /** @type {const} */ (["events", "tools", "prompts", "status", "usage", "settings"]);
/** @typedef {typeof TRAITS[number]} Trait */

const TICK_MS = 200;
/** Flush even when no animation frame comes (hidden tab), so state never goes stale. */
const FALLBACK_MS = 250;

/**
 * The calls the view's buttons (and the lab extension's snapshot) make, through `link`, which
 * the view's dispose() cuts. A click leaves the page's selection in a button, and JupyterLab's
 * editors remember the last selection they saw, so a node of a finished view can outlive it
 * (one per finished turn, for the page's life: tests/browser/test_long_session_browser.py); it
 * must not keep the view. Made out here so that these closures hold `link` and nothing of the
 * constructor's scope (its closures share one context, `this` included).
 * @param {{view: ChatView | null}} link
 */
function buttonCalls(link) {
  return {
    // every answer says who clicked, as this page knows them (a label the kernel saves)
    answer: (/** @type {PageMessage} */ msg) =>
      link.view?.model.send(/** @type {PageMessage} */ ({ ...msg, who: pageUser() })),
    stop: () => link.view?.stopTurn(),
    menu: () => link.view?.requestInterrupt(),
    snapshot: () => link.view?.snapshot() ?? [],
  };
}

/**
 * The card buttons (Undo) of a `%chat serve` session's widget, which stays live for as long
 * as the server runs: each call is done once it answered, so its Undo is offered at once (a
 * turn's live cards get theirs in its saved record). From the lab extension, which has the
 * notebook (`window.__jupyter_turns_card_actions`); null elsewhere.
 * @param {Model} model
 * @param {HTMLElement} node
 * @returns {import("../render/cardactions.js").CardActions | null}
 */
function servingActions(model, node) {
  if (model.get("settings")?.serve !== true) return null;
  const make = /** @type {any} */ (globalThis).__jupyter_turns_card_actions;
  return typeof make === "function" ? make(node) : null;
}

export class ChatView {
  /**
   * @param {Model} model
   * @param {HTMLElement} host
   */
  constructor(model, host) {
    this.model = model;
    this.root = h("div", { class: "jt-root", tabindex: "-1" });
    this.stats = new Stats(this.root);
    this.mode = parseMode(model.get("settings")?.reasoning);
    this.transcript = new Transcript(this.stats, servingActions(model, this.root));
    this.drafts = new Drafts(() => new Draft(this.stats, this.mode));
    // What the view's buttons call goes through `link`, which dispose() cuts (see buttonCalls)
    /** @type {{view: ChatView | null}} */
    this.link = { view: this };
    const calls = buttonCalls(this.link);
    this.prompts = new Prompts(calls.answer);
    this.statusBar = new StatusBar(calls.stop, calls.menu);
    this.footer = h("div", { class: "jt-footer" });
    this.root.append(
      this.transcript.el,
      this.drafts.top.el,
      this.prompts.area,
      this.statusBar.el,
      this.footer,
    );
    host.appendChild(this.root);

    /** @type {Set<Trait>} */
    this.dirty = new Set(TRAITS);
    /** @type {DraftOp[]} */
    this.ops = [];
    /** @type {import("../protocol/messages.js").ProgressMsg[]} */
    this.progressOps = [];
    this.frame = 0;
    this.timeout = 0;
    this.ticker = 0;

    /** @type {[string, (...args: any[]) => void][]} */
    this.listeners = TRAITS.map((name) => [`change:${name}`, () => this.touch(name)]);
    this.listeners.push(["msg:custom", (msg) => this.onCustom(msg)]);
    for (const [name, cb] of this.listeners) model.on(name, cb);
    this.onKeydown = this.onKeydown.bind(this);
    this.root.addEventListener("keydown", this.onKeydown);

    this.flush();
    model.send({ type: "ready" });
    // for the lab extension, when the kernel dies mid-turn (labextension/turns.js)
    /** @type {any} */ (this.root).jtSnapshot = calls.snapshot;
  }

  /**
   * What this view shows, as saved events: the synced events, then every draft text block
   * (still streaming, or handed to an event that has not arrived) as a `partial` event (a tool
   * call's draft card is left out, as the kernel drops a call stopped mid-arguments) — a
   * sub-agent's with its `parent`, so it is drawn in that call's card.
   * @returns {import("../protocol/types.js").ConvEvent[]}
   */
  snapshot() {
    this.flush();
    const events = [...(this.model.get("events") ?? [])];
    const known = new Set(events.map((event) => String(event.id)));
    const now = new Date().toISOString();
    for (const [parent, draft] of this.drafts.entries()) {
      /** @param {{kind: string, view: {text(): string}}} block @param {string} id */
      const partial = (block, id) => ({
        kind: block.kind,
        id,
        timestamp: now,
        content: block.view.text(),
        metadata: { partial: true },
        ...(parent === null ? {} : { parent }),
      });
      for (const [id, block] of draft.handed) {
        if (!known.has(id) && block.kind !== "tool_input") events.push(partial(block, id));
      }
      const prefix = parent === null ? "draft" : `draft-${parent}`;
      for (const [index, block] of draft.blocks) {
        // a call still being written is no event: it was never complete
        if (block.kind !== "tool_input") events.push(partial(block, `${prefix}-${index}`));
      }
    }
    return events;
  }

  /** @param {Trait} name */
  touch(name) {
    this.dirty.add(name);
    this.schedule();
  }

  /** @param {any} msg */
  onCustom(msg) {
    const type = msg?.type;
    if (type === "delta" || type === "released" || type === "draft" || type === "draft_clear") {
      this.ops.push(msg);
      this.schedule();
    } else if (type === "progress") {
      this.progressOps.push(msg);
      this.schedule();
    }
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => this.flush());
    this.timeout = window.setTimeout(() => this.flush(), FALLBACK_MS);
  }

  flush() {
    cancelAnimationFrame(this.frame);
    clearTimeout(this.timeout);
    this.frame = 0;
    this.timeout = 0;
    this.stats.add("frames");
    const dirty = this.dirty;
    this.dirty = new Set();
    const get = (/** @type {Trait} */ name) => this.model.get(name);

    if (dirty.has("settings")) {
      const mode = parseMode(get("settings")?.reasoning);
      if (!sameMode(mode, this.mode)) {
        this.mode = mode;
        this.drafts.setMode(mode);
        dirty.add("events");
      }
    }
    const ops = this.ops;
    this.ops = [];
    for (const op of ops) this.drafts.apply(op);

    if (dirty.has("events")) this.transcript.update(get("events") ?? [], this.mode, this.drafts);
    this.drafts.forget((eventId) => this.transcript.shows(eventId));
    this.transcript.placeDrafts(this.drafts);
    if (dirty.has("events") || dirty.has("tools")) this.transcript.updateTools(get("tools") ?? {});
    const progress = this.progressOps;
    this.progressOps = [];
    for (const op of progress) this.transcript.addProgress(op.tools);
    if (dirty.has("events") || dirty.has("prompts")) {
      const added = this.prompts.update(
        get("prompts") ?? [],
        (callId) => this.transcript.cards.get(callId)?.promptSlot ?? null,
      );
      this.focusPrompt(added);
    }
    this.drafts.render();
    if (dirty.has("status") || dirty.has("prompts")) {
      this.statusBar.update(
        get("status") ?? null,
        this.prompts.interruptOpen,
        this.prompts.waitingFor,
      );
      this.root.dataset.state = String(get("status")?.state ?? "idle");
    }
    if (dirty.has("usage") || dirty.has("settings") || dirty.has("events")) {
      renderFooter(this.footer, get("usage"), get("settings"), subagentTotals(get("events") ?? []));
    }
    this.stats.publish();
    this.tick();
  }

  /** Live timers: running tools' elapsed time and the retry countdown. */
  tick() {
    const now = Date.now();
    const running = this.transcript.tick(now);
    const retrying = this.statusBar.tick(now);
    if ((running || retrying) && !this.ticker) {
      this.ticker = window.setInterval(() => this.tick(), TICK_MS);
    } else if (!running && !retrying && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = 0;
    }
  }

  /** The Stop button: one click stops the turn (a menu open meanwhile is answered by it). */
  stopTurn() {
    if (isActive(this.model.get("status"))) {
      this.model.send({ type: "interrupt_request", action: "stop", who: pageUser() });
    }
  }

  /** The options button or Esc: the kernel opens the interrupt menu. */
  requestInterrupt() {
    if (isActive(this.model.get("status")) && !this.prompts.interruptOpen) {
      this.model.send({ type: "interrupt_request", who: pageUser() });
    }
  }

  /** @param {import("./prompts.js").PromptView[]} added */
  focusPrompt(added) {
    const active = document.activeElement;
    if (!added.length || !(active && this.root.contains(active))) return;
    const view = added[added.length - 1];
    const field = /** @type {HTMLElement | null} */ (
      view.el.querySelector(".jt-editor:not([hidden]) textarea")
    );
    (field ?? view.el).focus();
  }

  /** @param {KeyboardEvent} event */
  onKeydown(event) {
    const target = /** @type {HTMLElement} */ (event.target);
    if (event.key === "Escape") {
      if (isActive(this.model.get("status"))) {
        this.requestInterrupt();
        event.preventDefault();
        event.stopPropagation();
      }
      return;
    }
    if (event.key !== "Enter") return;
    const plain = !(event.shiftKey || event.ctrlKey || event.metaKey || event.altKey);
    const tag = target.tagName;
    // Keep the notebook's own Enter shortcuts (edit mode, run cell) away from the widget's
    // fields and buttons; Shift+Enter elsewhere in the widget still runs the cell.
    if (tag === "TEXTAREA" || tag === "INPUT") {
      if (plain || event.ctrlKey || event.metaKey) event.stopPropagation();
      return;
    }
    if (!plain) return;
    event.stopPropagation();
    if (tag === "BUTTON" || tag === "SUMMARY" || tag === "A") return;
    if (this.prompts.primaryFor(target)) event.preventDefault();
  }

  dispose() {
    for (const [name, cb] of this.listeners) this.model.off(name, cb);
    this.root.removeEventListener("keydown", this.onKeydown);
    cancelAnimationFrame(this.frame);
    clearTimeout(this.timeout);
    clearInterval(this.ticker);
    this.stats.dispose();
    this.link.view = null; // what outlives the view reaches nothing of it
    this.root.replaceChildren(); // nor the rest of its DOM, through the root
    this.root.remove();
  }
}
