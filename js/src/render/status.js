/**
 * The status line (turn state, retry countdown, Stop button) and the usage footer.
 */
import { formatCost, formatCount, h } from "../dom.js";
import { subagentFooter } from "../nested.js";

/** @typedef {import("../types.js").Status} Status */
/** @typedef {import("../types.js").Usage} Usage */
/** @typedef {import("../types.js").Settings} Settings */
/** @typedef {import("../nested.js").SubagentTotals} SubagentTotals */

const STATE_LABELS = /** @type {Record<string, string>} */ ({
  idle: "",
  streaming: "Answering…",
  evaluating: "Checking tool calls…",
  executing: "Running tools…",
  continuing: "Sending tool results…",
  interrupted_streaming: "Interrupted",
  interrupted_tool: "Interrupted",
  replying: "Replying…",
  complete: "",
  aborted: "Aborted",
});

const INACTIVE = new Set(["idle", "complete", "aborted"]);

/** @param {Status | null | undefined} status */
export function isActive(status) {
  return !INACTIVE.has(String(status?.state ?? "idle"));
}

export class StatusBar {
  /** @param {() => void} onStop */
  constructor(onStop) {
    this.label = h("span", { class: "jt-state" });
    this.retry = h("span", { class: "jt-retry", role: "status", hidden: true });
    this.stop = h(
      "button",
      {
        type: "button",
        class: "jt-button jt-stop",
        title: "Interrupt (Esc)",
        onclick: () => onStop(),
      },
      "■ Stop",
    );
    this.el = h("div", { class: "jt-statusbar" }, this.label, this.retry, this.stop);
    /** @type {Status | null} */
    this.status = null;
  }

  /**
   * @param {Status | null} status
   * @param {boolean} menuOpen an interrupt menu is showing: Stop has been pressed already
   */
  update(status, menuOpen) {
    this.status = status;
    const state = String(status?.state ?? "idle");
    this.label.textContent = STATE_LABELS[state] ?? state;
    this.el.dataset.state = state;
    const active = isActive(status);
    this.stop.hidden = !active;
    this.stop.disabled = menuOpen;
    this.el.hidden = !active && !this.label.textContent && !status?.retry;
    this.tick(Date.now());
  }

  /**
   * Refresh the retry countdown.
   * @param {number} now epoch ms
   * @returns {boolean} whether a countdown is running
   */
  tick(now) {
    const retry = this.status?.retry;
    if (!retry) {
      this.retry.hidden = true;
      return false;
    }
    const seconds = Math.max(0, Math.ceil((Number(retry.until) - now) / 1000));
    const why = retry.reason ? String(retry.reason) : "request failed";
    const attempt = retry.max_attempts ? ` (attempt ${retry.attempt}/${retry.max_attempts})` : "";
    this.retry.textContent =
      seconds > 0
        ? `${why} — retrying in ${seconds} s${attempt}`
        : `${why} — retrying now${attempt}`;
    this.retry.hidden = false;
    return seconds > 0;
  }
}

/**
 * @param {HTMLElement} footer
 * @param {Usage | null | undefined} usage
 * @param {Settings | null | undefined} settings
 * @param {SubagentTotals | null} [subagents] the turn's sub-agents' usage (nested.js), shown
 *   apart from the turn's own
 */
export function renderFooter(footer, usage, settings, subagents = null) {
  /** @type {(string | Node)[]} */
  const parts = [];
  if (settings?.model) parts.push(String(settings.model));
  if (settings?.thread) parts.push(`thread ${String(settings.thread)}`);
  const u = usage ?? {};
  if (u.input_tokens || u.output_tokens) {
    let tokens = `${formatCount(u.input_tokens)} in · ${formatCount(u.output_tokens)} out`;
    if (u.cache_read_input_tokens)
      tokens += ` · ${formatCount(u.cache_read_input_tokens)} cache read`;
    if (u.cache_creation_input_tokens)
      tokens += ` · ${formatCount(u.cache_creation_input_tokens)} cache write`;
    parts.push(tokens);
  }
  if (typeof u.cost_usd === "number") parts.push(formatCost(u.cost_usd));
  const nested = subagentFooter(subagents);
  if (nested) parts.push(nested);
  footer.replaceChildren(parts.join("  ·  "));
  footer.hidden = parts.length === 0;
}
