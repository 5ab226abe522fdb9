/**
 * Open prompts (`prompts` trait) → buttons, and every click → one `model.send({...})`.
 *
 *   approval  → {type: "approval", prompt_id, action: approved|skipped|edited|always_allowed,
 *                arguments?}
 *   result    → {type: "result", prompt_id, action: delivered|withheld|result_edited, content?}
 *   inquiry   → {type: "inquiry", prompt_id, answer}
 *   interrupt → {type: "interrupt", prompt_id, action: stop|abort|reply|continue|restart, text?}
 *   budget    → {type: "budget", prompt_id, action: continue|stop}
 *
 * (shapes: messages.js; each action is the name the decision is saved under)
 *
 * A prompt sends at most once: after the first action all its controls are disabled until
 * the kernel removes it or replaces it (same id, new content — e.g. `error` after rejected
 * arguments), which rebuilds it enabled, keeping what the user typed.
 *
 * A prompt about a tool call goes into that call's card, even a card in a sub-agent's nested
 * transcript (which is opened if the user had folded it).
 */
import { h } from "../util/dom.js";
import { BUILDERS, buildUnknown } from "./prompt-forms.js";

/** @typedef {import("../protocol/types.js").Prompt} Prompt */
/** @typedef {import("../protocol/types.js").Send} Send */
/**
 * @typedef {{id: string, key: string, prompt: Prompt, el: HTMLElement, sent: boolean,
 *            primary: (() => void) | null}} PromptView
 */

export class Prompts {
  /** @param {Send} send */
  constructor(send) {
    this.send = send;
    this.area = h("div", { class: "jt-prompts" });
    /** @type {Map<string, PromptView>} */
    this.views = new Map();
  }

  /**
   * @param {Prompt[]} prompts
   * @param {(callId: string) => HTMLElement | null} slotFor a tool card's prompt slot, at any
   *   depth of sub-agents' transcripts
   * @returns {PromptView[]} prompts that appeared in this update
   */
  update(prompts, slotFor) {
    const list = Array.isArray(prompts) ? prompts : [];
    /** @type {PromptView[]} */
    const added = [];
    const seen = new Set();
    for (const prompt of list) {
      const id = String(prompt.id);
      seen.add(id);
      const key = JSON.stringify(prompt);
      const old = this.views.get(id);
      if (old && old.key === key) continue;
      const view = this.build(prompt, key);
      if (old) {
        carryInput(old.el, view.el);
        old.el.replaceWith(view.el);
      } else {
        added.push(view);
      }
      this.views.set(id, view);
    }
    for (const [id, view] of this.views) {
      if (!seen.has(id)) {
        view.el.remove();
        this.views.delete(id);
      }
    }
    for (const prompt of list) {
      const view = /** @type {PromptView} */ (this.views.get(String(prompt.id)));
      const slot =
        prompt.type !== "interrupt" && prompt.call_id ? slotFor(String(prompt.call_id)) : null;
      const parent = slot ?? this.area;
      if (view.el.parentNode === parent) continue;
      parent.appendChild(view.el);
      if (slot) reveal(slot);
    }
    return added;
  }

  /** The kind of the first prompt that waits for the user's click (not the interrupt menu). */
  get waitingFor() {
    for (const view of this.views.values()) {
      const type = String(view.prompt.type);
      if (type !== "interrupt" && !view.sent) return type;
    }
    return null;
  }

  get interruptOpen() {
    for (const view of this.views.values()) if (view.prompt.type === "interrupt") return true;
    return false;
  }

  /**
   * Run the primary action of the prompt that contains `target` (Enter key).
   * @param {Element} target
   */
  primaryFor(target) {
    const el = target.closest(".jt-prompt");
    const view = el ? this.views.get(String(el.getAttribute("data-prompt-id"))) : undefined;
    if (!view?.primary || view.sent) return false;
    view.primary();
    return true;
  }

  /**
   * @param {Prompt} prompt
   * @param {string} key
   * @returns {PromptView}
   */
  build(prompt, key) {
    const el = h("div", {
      class: `jt-prompt jt-prompt-${String(prompt.type)}`,
      "data-prompt-id": String(prompt.id),
      tabindex: "0",
    });
    /** @type {PromptView} */
    const view = { id: String(prompt.id), key, prompt, el, sent: false, primary: null };
    /** @param {import("../protocol/messages.js").PromptAction} msg */
    const act = (msg) => {
      if (view.sent) return;
      view.sent = true;
      for (const control of el.querySelectorAll("button, textarea")) {
        /** @type {HTMLButtonElement | HTMLTextAreaElement} */ (control).disabled = true;
      }
      el.classList.add("jt-sent");
      this.send({ ...msg, prompt_id: String(prompt.id) });
    };
    const builder = BUILDERS[String(prompt.type)] ?? buildUnknown;
    view.primary = builder(prompt, el, act);
    return view;
  }
}

/**
 * Open every fold around `el` (a nested transcript the user folded) so a prompt put there
 * shows, and the card's Arguments when the prompt's own are hidden there (styles.css), so what
 * the user is asked about is in full view however long it is.
 * @param {Element} el
 */
function reveal(el) {
  const args = el.closest(".jt-tool")?.querySelector(":scope > .jt-tool-args > details");
  if (args && el.querySelector(".jt-prompt-args"))
    /** @type {HTMLDetailsElement} */ (args).open = true;
  for (
    let fold = el.closest("details");
    fold;
    fold = fold.parentElement?.closest("details") ?? null
  ) {
    /** @type {HTMLDetailsElement} */ (fold).open = true;
  }
}

/**
 * Keep the user's typing when a prompt is rebuilt with new content.
 * @param {HTMLElement} from
 * @param {HTMLElement} to
 */
function carryInput(from, to) {
  for (const old of from.querySelectorAll("textarea[data-role]")) {
    const area = /** @type {HTMLTextAreaElement | null} */ (
      to.querySelector(`textarea[data-role="${old.getAttribute("data-role")}"]`)
    );
    if (!area) continue;
    area.value = /** @type {HTMLTextAreaElement} */ (old).value;
    area.dispatchEvent(new Event("input"));
    const editor = area.closest(".jt-editor");
    if (editor && !(/** @type {HTMLElement} */ (old.closest(".jt-editor"))?.hidden)) {
      /** @type {HTMLElement} */ (editor).hidden = false;
    }
  }
}
