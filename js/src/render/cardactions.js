/**
 * What a tool card offers after the call of a built-in tool (its response's `builtin`,
 * cells.js `savedBuiltin`): the proposed cell or diff of `insert_cell` /
 * `edit_cell`, Copy for a proposed cell, and — on a saved card, where the page gives
 * `actions` (the lab extension's record renderer) — Undo for a step of the model (a `python`
 * run, an inserted or edited cell) and "Add to notebook" for a `python` run. An `undo` event
 * says what was undone and, plainly, what was not.
 *
 * A record may come from someone else's notebook: what a card shows next to a button that
 * inserts or copies text is that very text, drawn from the call's arguments (never from a
 * saved `preview`, which could show one thing beside a button that inserts another).
 *
 * A finished turn's record offers "Rewind to before this turn" (`rewindBar`): the kernel first
 * says what the rewind would take back and undo, the user confirms, then it is done. A `rewind`
 * event says what was rewound; a record whose turn it names is drawn greyed, labelled
 * "Rewound" (`rewoundBy`).
 *
 * Clicks go to `actions`, which reach the kernel (undo, rewind) or the notebook (a new cell);
 * the answer shows next to the buttons. Tool text is only ever set as textContent.
 *
 * A card whose call changed a cell that is still there (inserted, edited, run or moved) links
 * to it: "Go to cell" scrolls the notebook to it, through the lab extension
 * (`window.__jupyter_turns_show_cell`, js/labextension/badges.js; without it, no link). The cell
 * links back: its provenance badge leads to this card.
 */
import { responseStatus } from "../protocol/fields.js";
import { h } from "../util/dom.js";
import { IMAGE_TYPES } from "./images.js";
import { whoName } from "../util/who.js";
import { callPreview, copyText, savedBuiltin } from "./cells.js";

/** @typedef {import("../protocol/types.js").ToolCallRequestEvent} ToolCallRequestEvent */
/** @typedef {import("../protocol/types.js").ToolCallResponseEvent} ToolCallResponseEvent */
/** @typedef {import("../protocol/types.js").UndoEvent} UndoEvent */
/**
 * @typedef {{ok: boolean, reason?: string, lines?: string[]}} ActionResult
 * @typedef {{undo(callId: string): Promise<ActionResult>,
 *            addCell(cell: {source: string, outputs: object[]}): Promise<ActionResult>,
 *            rewind?(requestId: string, confirm: boolean): Promise<ActionResult>,
 *            keep?(callIds: string[]): Promise<ActionResult>,
 *            undoAll?(callIds: string[]): Promise<ActionResult>}}
 *   CardActions (keep, undoAll: the review panel's, review.js)
 */
/** @typedef {import("../protocol/types.js").RewindEvent} RewindEvent */

/** Tools whose calls are steps the kernel can undo (editing/undo.py). */
const UNDOABLE = new Set([
  "python",
  "insert_cell",
  "edit_cell",
  "run_cell",
  "delete_cell",
  "move_cell",
]);

/**
 * @param {string} callId
 * @param {ToolCallRequestEvent | null} request
 * @param {ToolCallResponseEvent} response
 * @param {UndoEvent | null} undo
 * @param {CardActions | null} actions
 * @returns {HTMLElement | null}
 */
export function renderAfterCall(callId, request, response, undo, actions) {
  // the built-in the call went to; "" for any other tool, a notebook's tool of a built-in's
  // name too: it gets none of a built-in's drawing or buttons
  const builtin = savedBuiltin(response) ? String(request?.name ?? "") : "";
  const args = /** @type {Record<string, unknown>} */ (request?.arguments ?? {});
  const parts = [];
  const preview = callPreview(builtin, args, response.preview);
  if (preview) parts.push(h("div", { class: "jt-cell-preview" }, preview));
  if (undo) parts.push(renderUndo(undo));
  const status = h("span", { class: "jt-action-status jt-muted", "aria-live": "polite" });
  const buttons = [];
  if (builtin === "insert_cell" && typeof args.source === "string") {
    const source = args.source;
    const copy = actionButton("Copy cell", () => copyText(source, copy));
    buttons.push(copy);
  }
  // a python run whose code raised is an error result, but it ran: its outputs are there to
  // add, and what it changed in the namespace to undo
  const saved = responseStatus(response);
  const ran = saved === "done" || (builtin === "python" && Array.isArray(response.outputs));
  if (actions && ran && !undo && UNDOABLE.has(builtin)) {
    const undoButton = actionButton("Undo", () =>
      runAction(undoButton, status, "Undoing…", () => actions.undo(callId)),
    );
    buttons.push(undoButton);
  }
  if (actions && ran && builtin === "python" && typeof args.code === "string") {
    const code = args.code; // the card's arguments show it: the button adds exactly that
    const add = actionButton("Add to notebook", () =>
      runAction(add, status, "Adding…", () =>
        actions.addCell({ source: code, outputs: cellOutputs(response) }),
      ),
    );
    buttons.push(add);
  }
  const cellId = changedCell(response, undo);
  const go = cellId === null ? null : goToCell(cellId, status);
  if (go) buttons.push(go);
  if (buttons.length)
    parts.push(h("div", { class: "jt-actions jt-card-actions" }, ...buttons, status));
  return parts.length ? h("div", { class: "jt-after-call" }, ...parts) : null;
}

/**
 * The id of the cell the call changed, while it is there to go to: not a deleted cell, nor
 * an inserted one whose insert was undone.
 * @param {ToolCallResponseEvent} response
 * @param {UndoEvent | null} undo
 * @returns {string | null}
 */
function changedCell(response, undo) {
  const cell = /** @type {any} */ (response.cell);
  const id = cell?.cell_id;
  if (typeof id !== "string" || !id || cell.op === "delete") return null;
  return cell.op === "insert" && undo ? null : id;
}

/**
 * "Go to cell", where the page can scroll to a cell (the lab extension); what it could not do
 * shows in `status`.
 * @param {string} cellId
 * @param {HTMLElement} status
 * @returns {HTMLButtonElement | null}
 */
function goToCell(cellId, status) {
  const show = /** @type {any} */ (globalThis).__jupyter_turns_show_cell;
  if (typeof show !== "function") return null;
  const go = () => {
    status.textContent = "";
    Promise.resolve(show(el, cellId)).then(
      (/** @type {ActionResult} */ result) => {
        if (!result?.ok) status.textContent = String(result?.reason ?? "The cell is not here.");
      },
      (/** @type {unknown} */ err) => (status.textContent = `Failed: ${String(err)}`),
    );
  };
  const el = /** @type {HTMLButtonElement} */ (
    h("button", { type: "button", class: "jt-button jt-link", onclick: go }, "Go to cell")
  );
  return el;
}

/**
 * "Undone", naming who clicked Undo when the event says (as their page reported it).
 * @param {UndoEvent} undo
 * @returns {string}
 */
function undoneBy(undo) {
  const who = whoName(undo.who);
  return who ? `Undone by ${who}` : "Undone";
}

/**
 * @param {UndoEvent} undo
 * @returns {HTMLElement}
 */
function renderUndo(undo) {
  const done = Array.isArray(undo.done) ? undo.done.map(String) : [];
  const kept = Array.isArray(undo.not_undone) ? undo.not_undone.map(String) : [];
  return h(
    "div",
    { class: "jt-undo" },
    h("div", null, `${undoneBy(undo)}: ${done.join(", ") || "nothing"}`),
    kept.length ? h("div", { class: "jt-undo-kept" }, `Not undone: ${kept.join("; ")}`) : null,
  );
}

/**
 * The cell a python run becomes: its saved text outputs, then its images. A record may come
 * from someone else's notebook, and a cell the user adds is trusted: only text (streams,
 * plain-text results, errors) and images of the four allowed types go in, rebuilt field by
 * field, never a record's HTML or script.
 * @param {ToolCallResponseEvent} response
 * @returns {object[]}
 */
export function cellOutputs(response) {
  const outputs = (Array.isArray(response.outputs) ? response.outputs : [])
    .map(textOutput)
    .filter((o) => o !== null);
  const images = Array.isArray(response.images) ? response.images : [];
  for (const image of images) {
    if (!IMAGE_TYPES.includes(String(image?.media_type)) || typeof image?.data !== "string")
      continue;
    outputs.push({
      output_type: "display_data",
      data: { [image.media_type]: image.data, "text/plain": `<${String(image.label ?? "image")}>` },
      metadata: {},
    });
  }
  return outputs;
}

/**
 * A saved output as plain text only, or null.
 * @param {any} output
 * @returns {object | null}
 */
function textOutput(output) {
  const text = (/** @type {unknown} */ value) =>
    Array.isArray(value) ? value.map(String).join("") : typeof value === "string" ? value : "";
  switch (output?.output_type) {
    case "stream":
      return {
        output_type: "stream",
        name: output.name === "stderr" ? "stderr" : "stdout",
        text: text(output.text),
      };
    case "execute_result":
    case "display_data":
      return {
        output_type: "display_data",
        data: { "text/plain": text(output.data?.["text/plain"]) },
        metadata: {},
      };
    case "error":
      return {
        output_type: "error",
        ename: text(output.ename),
        evalue: text(output.evalue),
        traceback: Array.isArray(output.traceback) ? output.traceback.map(String) : [],
      };
    default:
      return null;
  }
}

/**
 * Disable the button while the action runs; show its answer beside it.
 * @param {HTMLButtonElement} el
 * @param {HTMLElement} status
 * @param {string} busy
 * @param {() => Promise<ActionResult>} action
 */
export function runAction(el, status, busy, action) {
  el.disabled = true;
  status.textContent = busy;
  action().then(
    (result) => {
      status.textContent = result.ok ? (result.lines ?? ["Done."]).join("\n") : `${result.reason}`;
      el.disabled = result.ok;
    },
    (err) => {
      status.textContent = `Failed: ${String(err)}`;
      el.disabled = false;
    },
  );
}

/**
 * @param {string} label
 * @param {() => void} onClick
 */
export function actionButton(label, onClick) {
  return h("button", { type: "button", class: "jt-button", onclick: () => onClick() }, label);
}

/**
 * "Rewound", naming who rewound when the event says (as their page reported it).
 * @param {RewindEvent} event
 * @returns {string}
 */
export function rewoundBy(event) {
  const who = whoName(event.who);
  return who ? `Rewound by ${who}` : "Rewound";
}

/**
 * What a rewind took back and undid, and plainly what it could not undo.
 * @param {RewindEvent} event
 * @returns {HTMLElement}
 */
export function renderRewind(event) {
  const first = Number(event.turn) || 1;
  const count = Array.isArray(event.requests) ? event.requests.length : 1;
  const turns = count > 1 ? `turns ${first}–${first + count - 1}` : `turn ${first}`;
  const done = Array.isArray(event.done) ? event.done.map(String) : [];
  const kept = Array.isArray(event.not_undone) ? event.not_undone.map(String) : [];
  return h(
    "div",
    { class: "jt-rewind jt-undo" },
    h("div", null, `${rewoundBy(event)}: ${turns}, no longer sent to the model.`),
    done.length ? h("div", null, `Undone: ${done.join("; ")}`) : null,
    kept.length ? h("div", { class: "jt-undo-kept" }, `Not undone: ${kept.join("; ")}`) : null,
  );
}

/**
 * The rewind event that took back the turn of `requestId`, if any.
 * @param {any[]} events
 * @param {string} requestId
 * @returns {RewindEvent | null}
 */
export function rewindOf(events, requestId) {
  const found = events.find(
    (e) => e?.kind === "rewind" && Array.isArray(e.requests) && e.requests.includes(requestId),
  );
  return found ?? null;
}

/**
 * "Rewind to before this turn": asks the kernel what it would do, shows it with Rewind and
 * Cancel, and does it on Rewind. The kernel then rewrites this record (it shows "Rewound").
 * @param {string} requestId the turn's request event
 * @param {CardActions} actions
 * @returns {HTMLElement}
 */
export function rewindBar(requestId, actions) {
  const status = h("span", { class: "jt-action-status jt-muted", "aria-live": "polite" });
  const confirm = h("div", { class: "jt-rewind-confirm", hidden: true });
  /** @type {(sure: boolean) => Promise<ActionResult>} */
  const ask = (sure) =>
    actions.rewind ? actions.rewind(requestId, sure) : Promise.resolve({ ok: false, reason: "" });
  const start = actionButton("Rewind to before this turn", () => {
    start.disabled = true;
    status.textContent = "Asking the kernel…";
    ask(false).then(
      (plan) => {
        status.textContent = plan.ok ? "" : String(plan.reason);
        start.disabled = plan.ok;
        if (plan.ok) showConfirm(plan.lines ?? []);
      },
      (err) => {
        status.textContent = `Failed: ${String(err)}`;
        start.disabled = false;
      },
    );
  });
  const showConfirm = (/** @type {string[]} */ lines) => {
    const yes = actionButton("Rewind", () => {
      cancel.disabled = true;
      runAction(yes, status, "Rewinding…", () => ask(true));
    });
    const cancel = actionButton("Cancel", () => {
      confirm.replaceChildren();
      confirm.hidden = true;
      start.disabled = false;
    });
    confirm.replaceChildren(
      ...lines.map((line) => h("div", null, line)),
      h("div", null, yes, cancel),
    );
    confirm.hidden = false;
  };
  return h("div", { class: "jt-actions jt-rewind-actions" }, start, status, confirm);
}
