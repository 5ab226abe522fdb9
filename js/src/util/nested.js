/**
 * Sub-agents, the pure part: a tool call can run a nested turn, whose events carry
 * `parent: <call_id>` and are drawn inside that call's card (nesting to any depth). Grouping
 * events by parent, finding where each tool call's card goes, and the sub-agent usage of a
 * card's summary and of the footer are plain functions here, testable without a DOM.
 */
import { formatCost, formatCount } from "./dom.js";

/** @typedef {import("../protocol/types.js").ConvEvent} ConvEvent */
/** @typedef {import("../protocol/types.js").LiveTool} LiveTool */
/**
 * A sub-agent's usage, from its saved response or its live `tools` entry.
 * @typedef {{outcome: string | null, cycles: number | null, tokens: number,
 *            cost: number | null}} SubagentStats
 * @typedef {{count: number, input_tokens: number, output_tokens: number,
 *            cost_usd: number | null}} SubagentTotals
 * @typedef {{event: ConvEvent} | {callId: string, nested: Item[]}} Item
 *   one thing a transcript draws: an event, or a tool call's card with its nested transcript
 */

const TOOL_KINDS = new Set([
  "tool_call_request",
  "tool_call_response",
  "inquiry_request",
  "inquiry_response",
  "undo",
]);

/**
 * The call id of the sub-agent whose nested turn produced `item` (an event, or a draft
 * message), or null for the top level.
 * @param {unknown} item
 * @returns {string | null}
 */
export function parentOf(item) {
  const parent = item && typeof item === "object" ? /** @type {any} */ (item).parent : undefined;
  return typeof parent === "string" && parent ? parent : null;
}

/**
 * The events of each transcript, in order: the top level's under null, each sub-agent's under
 * its call id.
 * @param {ConvEvent[]} events
 * @returns {Map<string | null, ConvEvent[]>}
 */
export function groupByParent(events) {
  /** @type {Map<string | null, ConvEvent[]>} */
  const groups = new Map();
  for (const event of Array.isArray(events) ? events : []) {
    const key = parentOf(event);
    const group = groups.get(key);
    if (group) group.push(event);
    else groups.set(key, [event]);
  }
  return groups;
}

/** @param {ConvEvent} event */
export function isToolEvent(event) {
  return TOOL_KINDS.has(String(event?.kind));
}

/**
 * Where each tool call's card is drawn: the transcript (parent key) of its request, or of the
 * first event naming it when the request is missing.
 * @param {ConvEvent[]} events
 * @returns {Map<string, string | null>} call id → parent key
 */
export function callHomes(events) {
  /** @type {Map<string, string | null>} */
  const homes = new Map();
  /** @type {Set<string>} */
  const requested = new Set();
  for (const event of Array.isArray(events) ? events : []) {
    if (!isToolEvent(event)) continue;
    const callId = String(event.call_id);
    const isRequest = event.kind === "tool_call_request";
    if (requested.has(callId) || (homes.has(callId) && !isRequest)) continue;
    homes.set(callId, parentOf(event));
    if (isRequest) requested.add(callId);
  }
  return homes;
}

/**
 * The transcript tree: each transcript's events in order, a tool call as one item (its card,
 * placed where `callHomes` says) holding the items of its sub-agent's transcript, recursively.
 * Events of calls never drawn (a parent missing from the record, or a cycle) are left out.
 * @param {ConvEvent[]} events
 * @returns {Item[]} the top level's items
 */
export function layout(events) {
  const groups = groupByParent(events);
  const homes = callHomes(events);
  /** @type {Set<string>} */
  const placed = new Set();
  /**
   * @param {string | null} key
   * @returns {Item[]}
   */
  const level = (key) => {
    /** @type {Item[]} */
    const items = [];
    for (const event of groups.get(key) ?? []) {
      if (!isToolEvent(event)) {
        items.push({ event });
        continue;
      }
      const callId = String(event.call_id);
      if (placed.has(callId) || homes.get(callId) !== key) continue;
      placed.add(callId);
      items.push({ callId, nested: [] });
    }
    // each call's own transcript, once all of this level's items are known
    for (const item of items) if ("callId" in item) item.nested = level(item.callId);
    return items;
  };
  return level(null);
}

/** @param {unknown} value */
function num(value) {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * A sub-agent call's usage: from its saved response (`subagent: {outcome, cycles, usage,
 * cost_usd}`) once there is one, else from its live `tools` entry (`subagent: {cycles,
 * cost_usd, input_tokens, output_tokens}`); null when the call is no sub-agent.
 * @param {import("../protocol/types.js").ToolCallResponseEvent | null | undefined} response
 * @param {LiveTool | null | undefined} live
 * @returns {SubagentStats | null}
 */
export function subagentStats(response, live) {
  const saved = response?.subagent;
  if (saved && typeof saved === "object") {
    const usage = saved.usage && typeof saved.usage === "object" ? saved.usage : {};
    return {
      outcome: typeof saved.outcome === "string" ? saved.outcome : null,
      cycles: num(saved.cycles),
      tokens: (num(usage.input_tokens) ?? 0) + (num(usage.output_tokens) ?? 0),
      cost: num(saved.cost_usd),
    };
  }
  const running = /** @type {any} */ (live)?.subagent;
  if (running && typeof running === "object") {
    return {
      outcome: null,
      cycles: num(running.cycles),
      tokens: (num(running.input_tokens) ?? 0) + (num(running.output_tokens) ?? 0),
      cost: num(running.cost_usd),
    };
  }
  return null;
}

/**
 * The nested transcript's summary line: "Sub-agent · 2 cycles · 160 tokens · $0.0003".
 * @param {SubagentStats | null} stats
 */
export function subagentSummary(stats) {
  const parts = ["Sub-agent"];
  if (stats?.outcome && stats.outcome !== "complete") parts.push(stats.outcome);
  if (stats?.cycles !== null && stats?.cycles !== undefined) {
    parts.push(`${formatCount(stats.cycles)} cycle${stats.cycles === 1 ? "" : "s"}`);
  }
  if (stats?.tokens) parts.push(`${formatCount(stats.tokens)} tokens`);
  if (stats?.cost !== null && stats?.cost !== undefined) parts.push(formatCost(stats.cost));
  return parts.join(" · ");
}

/**
 * The sub-agents' usage in a turn: the sum over its top-level tool call responses (each one's
 * usage already holds its own nested sub-agents'). `count` 0: there were none.
 * @param {ConvEvent[]} events
 * @returns {SubagentTotals}
 */
export function subagentTotals(events) {
  /** @type {SubagentTotals} */
  const totals = { count: 0, input_tokens: 0, output_tokens: 0, cost_usd: null };
  for (const event of Array.isArray(events) ? events : []) {
    if (event?.kind !== "tool_call_response" || parentOf(event) !== null) continue;
    const sub = event.subagent;
    if (!sub || typeof sub !== "object") continue;
    const usage = sub.usage && typeof sub.usage === "object" ? sub.usage : {};
    totals.count += 1;
    totals.input_tokens += num(usage.input_tokens) ?? 0;
    totals.output_tokens += num(usage.output_tokens) ?? 0;
    const cost = num(sub.cost_usd);
    if (cost !== null) totals.cost_usd = (totals.cost_usd ?? 0) + cost;
  }
  return totals;
}

/**
 * The footer's sub-agent part ("sub-agents 160 tokens $0.0003"), or null when there were none.
 * @param {SubagentTotals | null | undefined} totals
 */
export function subagentFooter(totals) {
  if (!totals?.count) return null;
  const used = totals.input_tokens + totals.output_tokens;
  const parts = ["sub-agents"];
  if (used) parts.push(`${formatCount(used)} tokens`); // a scripted model reports none
  if (totals.cost_usd !== null) parts.push(formatCost(totals.cost_usd));
  return parts.length > 1 ? parts.join(" ") : `sub-agents ${formatCount(totals.count)}`;
}
