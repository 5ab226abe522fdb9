/**
 * The status line (turn state, retry countdown, Stop button) and the usage footer.
 */
import { formatCost, formatCount, h } from "../util/dom.js";
import { subagentFooter } from "../util/nested.js";

/** @typedef {import("../protocol/types.js").Status} Status */
/** @typedef {import("../protocol/types.js").Usage} Usage */
/** @typedef {import("../protocol/types.js").Settings} Settings */
/** @typedef {import("../util/nested.js").SubagentTotals} SubagentTotals */

const STATE_LABELS = /** @type {Record<string, string>} */ ({
  idle: "",
  streaming: "Answering…",
  evaluating: "Checking tool calls…",
  executing: "Running tools…",
  continuing: "Sending tool results…",
  interrupted_streaming: "Interrupted",
  interrupted_tool: "Interrupted",
  replying: "Replying…",
  budget_paused: "Paused: the budget would be passed",
  complete: "",
  aborted: "Aborted",
  serving: "Serving MCP clients (%chat serve): their calls appear here",
});

const INACTIVE = new Set(["idle", "complete", "aborted"]);

/** While a prompt waits for the user's click, the turn waits on them: say so. */
const WAITING_LABELS = /** @type {Record<string, string>} */ ({
  approval: "Waiting for your approval",
  result: "Waiting for you to review a result",
  inquiry: "Waiting for your answer",
});

/**
 * The status line's words: the turn's state, unless an open prompt waits for the user.
 * @param {string} state
 * @param {string | null} [waiting] the kind of the prompt waiting for a click, if any
 */
export function stateLabel(state, waiting = null) {
  if (waiting && !INACTIVE.has(state) && WAITING_LABELS[waiting]) return WAITING_LABELS[waiting];
  return STATE_LABELS[state] ?? state;
}

/** @param {Status | null | undefined} status */
export function isActive(status) {
  return !INACTIVE.has(String(status?.state ?? "idle"));
}

export class StatusBar {
  /**
   * @param {() => void} onStop one click stops the turn, keeping what arrived
   * @param {() => void} onMenu opens the interrupt menu (abort, reply, continue, restart)
   */
  constructor(onStop, onMenu) {
    this.label = h("span", { class: "jt-state", role: "status" });
    this.retry = h("span", { class: "jt-retry", role: "status", hidden: true });
    this.stop = h(
      "button",
      {
        type: "button",
        class: "jt-button jt-stop",
        title: "Stop the turn, keeping what arrived",
        onclick: () => onStop(),
      },
      "■ Stop",
    );
    this.menu = h(
      "button",
      {
        type: "button",
        class: "jt-button jt-interrupt-menu",
        title: "Other ways to interrupt: abort, reply, continue, restart tools (Esc)",
        "aria-label": "Interrupt options",
        onclick: () => onMenu(),
      },
      "Interrupt…",
    );
    this.el = h("div", { class: "jt-statusbar" }, this.label, this.retry, this.stop, this.menu);
    /** @type {Status | null} */
    this.status = null;
  }

  /**
   * @param {Status | null} status
   * @param {boolean} menuOpen an interrupt menu is showing: it holds the choices now
   * @param {string | null} [waiting] the kind of the prompt waiting for the user's click
   */
  update(status, menuOpen, waiting = null) {
    this.status = status;
    const state = String(status?.state ?? "idle");
    this.label.textContent = stateLabel(state, waiting);
    this.el.dataset.state = state;
    this.el.dataset.waiting = waiting ?? "";
    const active = isActive(status);
    this.stop.hidden = !active;
    this.menu.hidden = !active || menuOpen;
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
 * The model that answered a saved turn: the last of its cycles naming one (a cycle names the
 * model only when it changed: turn_state.cycles_record), so the footer of a finished answer
 * names the model even when the thread asked for the provider's default.
 * @param {unknown} cycles the record's `turn.cycles`
 * @returns {string | undefined}
 */
export function answeredModel(cycles) {
  if (!Array.isArray(cycles)) return undefined;
  for (let i = cycles.length - 1; i >= 0; i--) {
    const model = cycles[i]?.model;
    if (typeof model === "string" && model) return model;
  }
  return undefined;
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
  // a turn that went anywhere but the default endpoint says where (the key went there too)
  if (settings?.endpoint) parts.push(`via ${String(settings.endpoint)}`);
  if (settings?.thread) parts.push(`thread ${String(settings.thread)}`);
  const u = usage ?? {};
  if (u.input_tokens || u.output_tokens) {
    let tokens = `${formatCount(u.input_tokens)} in · ${formatCount(u.output_tokens)} out`;
    if (u.cache_read_input_tokens)
      tokens += ` · ${formatCount(u.cache_read_input_tokens)} cache read`;
    if (u.cache_creation_input_tokens)
      tokens += ` · ${formatCount(u.cache_creation_input_tokens)} cache write`;
    if (u.cache_creation_1h_input_tokens)
      tokens += ` (${formatCount(u.cache_creation_1h_input_tokens)} kept 1 h)`;
    parts.push(tokens);
  }
  if (typeof u.cost_usd === "number") parts.push(`${formatCost(u.cost_usd)} (est.)`);
  const nested = subagentFooter(subagents);
  if (nested) parts.push(nested);
  const context = renderGauge(u.context);
  footer.replaceChildren(
    parts.join("  ·  "),
    ...(context ? [parts.length ? "  ·  " : "", context] : []),
  );
  footer.hidden = parts.length === 0 && !context;
}

/**
 * The context gauge as text and level: `41k / 200k context`, level `high` from 70 % and `full`
 * from 90 % of the window (`unknown` without one); null before anything was measured.
 * @param {{used?: number | null, window?: number | null} | undefined} context
 * @returns {{text: string, level: string, share: number | null} | null}
 */
export function gaugeInfo(context) {
  const used = context?.used;
  if (typeof used !== "number") return null;
  const window = typeof context?.window === "number" && context.window > 0 ? context.window : null;
  if (window === null) {
    return {
      text: `${shortCount(used)} context (window unknown for this model)`,
      level: "unknown",
      share: null,
    };
  }
  const share = used / window;
  const level = share >= 0.9 ? "full" : share >= 0.7 ? "high" : "ok";
  return { text: `${shortCount(used)} / ${shortCount(window)} context`, level, share };
}

/**
 * @param {{used?: number | null, window?: number | null} | undefined} context
 * @returns {HTMLElement | null}
 */
export function renderGauge(context) {
  const info = gaugeInfo(context);
  if (!info) return null;
  const title =
    info.share === null ? null : `${Math.round(info.share * 100)}% of the model's context window`;
  return h("span", { class: `jt-gauge jt-gauge-${info.level}`, title }, info.text);
}

/** @param {number} n tokens: `950`, `1.2k`, `41k`, `1.2M` */
export function shortCount(n) {
  const trim = (/** @type {number} */ x) => String(Number(x.toFixed(1)));
  if (n >= 1e6) return `${trim(n / 1e6)}M`;
  if (n >= 1e4) return `${Math.round(n / 1000)}k`;
  if (n >= 1000) return `${trim(n / 1000)}k`;
  return String(n);
}
