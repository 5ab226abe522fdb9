/**
 * The review panel of a turn run with `--edits review`: the model's cell changes (insert, edit,
 * delete, move) were made without asking, each decided by the policy with the detail
 * `REVIEWED` (jupyter_turns/tools/policy.py). The panel under the turn lists every one of them
 * — a line each, its cell or diff folded under it — with Keep / Undo each and Keep all / Undo
 * all. Undo is the card's Undo (one undo machinery in the kernel); Keep saves a `review` event.
 * The outcome comes from the record alone (an `undo` event of the call: undone; a `review`
 * event naming it: kept; neither: still to review), so a reopened notebook shows it, and an
 * unanswered review still offers its buttons where the page gives `actions`.
 *
 * Tool text is only ever set as textContent (through `h` and the cell views).
 */
import { responseStatus } from "../protocol/fields.js";
import { h } from "../util/dom.js";
import { cellPlace } from "../util/places.js";
import { whoName } from "../util/who.js";
import { callPreview } from "./cells.js";
import { actionButton, runAction } from "./cardactions.js";

/** @typedef {import("../protocol/types.js").ConvEvent} ConvEvent */
/** @typedef {import("../protocol/types.js").ToolCallRequestEvent} ToolCallRequestEvent */
/** @typedef {import("../protocol/types.js").ToolCallResponseEvent} ToolCallResponseEvent */
/** @typedef {import("./cardactions.js").CardActions} CardActions */

/** The decision detail of a change made for review (tools/policy.py REVIEWED). */
export const REVIEWED = "applied for your review at the end of the turn";

/**
 * @typedef {{callId: string, request: ToolCallRequestEvent, response: ToolCallResponseEvent,
 *            state: "pending" | "kept" | "undone", by: string}} Change
 */

/**
 * The turn's changes made for review, in the order they were made, each with its outcome.
 * @param {ConvEvent[]} events
 * @returns {Change[]}
 */
export function reviewedChanges(events) {
  /** @type {Map<string, ToolCallRequestEvent>} */
  const requests = new Map();
  /** @type {Map<string, string>} call id → who undid it */
  const undone = new Map();
  /** @type {Map<string, string>} call id → who kept it */
  const kept = new Map();
  /** @type {ToolCallResponseEvent[]} */
  const responses = [];
  for (const event of events) {
    if (event?.kind === "tool_call_request") requests.set(String(event.call_id), event);
    else if (event?.kind === "undo") undone.set(String(event.call_id), whoName(event.who) ?? "");
    else if (event?.kind === "review" && Array.isArray(event.kept)) {
      for (const id of event.kept) kept.set(String(id), whoName(event.who) ?? "");
    } else if (event?.kind === "tool_call_response" && madeForReview(event)) responses.push(event);
  }
  /** @type {Change[]} */
  const changes = [];
  for (const response of responses) {
    const callId = String(response.call_id);
    const request = requests.get(callId);
    if (!request) continue;
    const state = undone.has(callId) ? "undone" : kept.has(callId) ? "kept" : "pending";
    const by = (state === "undone" ? undone.get(callId) : kept.get(callId)) ?? "";
    changes.push({ callId, request, response, state, by });
  }
  return changes;
}

/**
 * @param {ToolCallResponseEvent} response
 * @returns {boolean}
 */
function madeForReview(response) {
  const decisions = Array.isArray(response.decisions) ? response.decisions : [];
  return (
    responseStatus(response) === "done" &&
    !response.parent &&
    decisions.some((d) => d?.by === "policy" && d?.detail === REVIEWED)
  );
}

/**
 * One line for a change, from the page's report of the cell (the response's `cell`).
 * @param {Change} change
 * @returns {string}
 */
export function changeLine(change) {
  const cell = /** @type {Record<string, unknown>} */ (change.response.cell ?? {});
  const at = Number.isInteger(cell.index) ? cellPlace(cell.index) : "a cell";
  switch (change.request.name) {
    case "insert_cell": {
      const type = change.request.arguments?.cell_type === "markdown" ? "markdown" : "code";
      return Number.isInteger(cell.index)
        ? `Inserted a ${type} cell, ${at}`
        : `Inserted a ${type} cell`;
    }
    case "edit_cell":
      return `Edited ${at}`;
    case "delete_cell":
      return `Deleted ${at}`;
    case "move_cell":
      return Number.isInteger(cell.from)
        ? `Moved ${cellPlace(cell.from)} to be ${at}`
        : `Moved ${at}`;
    default:
      return String(change.request.name);
  }
}

/**
 * @param {Change} change
 * @returns {string}
 */
function outcome(change) {
  if (change.state === "pending") return "To review";
  const word = change.state === "kept" ? "Kept" : "Undone";
  return change.by ? `${word} by ${change.by}` : word;
}

/**
 * The panel, or null when the turn made no change for review.
 * @param {ConvEvent[]} events the turn's record
 * @param {CardActions | null} actions the page's (the lab extension's record renderer)
 * @returns {HTMLElement | null}
 */
export function reviewPanel(events, actions) {
  const changes = reviewedChanges(events);
  if (!changes.length) return null;
  const pending = changes.filter((c) => c.state === "pending").map((c) => c.callId);
  const title = pending.length
    ? `Review the ${changes.length === 1 ? "change" : `${changes.length} changes`} made ` +
      `without asking (${pending.length} to review)`
    : `Reviewed: ${changes.length === 1 ? "the change" : `${changes.length} changes`} made ` +
      "without asking";
  const status = h("span", { class: "jt-action-status jt-muted", "aria-live": "polite" });
  const all = [];
  if (actions?.keep && actions.undoAll && pending.length) {
    const keep = actions.keep;
    const undoAll = actions.undoAll;
    const keepAll = actionButton("Keep all", () =>
      runAction(keepAll, status, "Keeping…", () => keep(pending)),
    );
    const undoEvery = actionButton("Undo all", () =>
      runAction(undoEvery, status, "Undoing…", () => undoAll(pending)),
    );
    all.push(keepAll, undoEvery, status);
  }
  return h(
    "div",
    { class: "jt-review", "data-pending": String(pending.length) },
    h("div", { class: "jt-review-title" }, title),
    h("ul", { class: "jt-review-list" }, ...changes.map((c) => changeItem(c, actions))),
    all.length ? h("div", { class: "jt-actions jt-review-actions" }, ...all) : null,
  );
}

/**
 * @param {Change} change
 * @param {CardActions | null} actions
 * @returns {HTMLElement}
 */
function changeItem(change, actions) {
  const args = /** @type {Record<string, unknown>} */ (change.request.arguments ?? {});
  const preview = callPreview(String(change.request.name), args, change.response.preview);
  const status = h("span", { class: "jt-action-status jt-muted", "aria-live": "polite" });
  const buttons = [];
  if (actions?.keep && change.state === "pending") {
    const keep = actions.keep;
    const keepOne = actionButton("Keep", () =>
      runAction(keepOne, status, "Keeping…", () => keep([change.callId])),
    );
    const undoOne = actionButton("Undo", () =>
      runAction(undoOne, status, "Undoing…", () => actions.undo(change.callId)),
    );
    buttons.push(keepOne, undoOne, status);
  }
  return h(
    "li",
    { class: "jt-review-item", "data-state": change.state, "data-call": change.callId },
    h(
      "details",
      { class: "jt-review-change" },
      h("summary", null, changeLine(change)),
      preview ? h("div", { class: "jt-cell-preview" }, preview) : null,
    ),
    h("span", { class: `jt-review-state jt-review-${change.state}` }, outcome(change)),
    buttons.length ? h("span", { class: "jt-actions" }, ...buttons) : null,
  );
}
