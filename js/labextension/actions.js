/**
 * The buttons of a saved conversation's cards (drawn by record.js): Undo and "Rewind to before
 * this turn" ask the kernel
 * (its `jupyter_turns.control` comm target, `jupyter_turns/editing/control.py`), which reverts
 * the step and asks this page back to remove or restore cells and to rewrite the record; "Add
 * to notebook" inserts a python run as a code cell with its outputs, below the chat cell, here
 * in the page.
 */
import { CONTROL_TARGET } from "./constants.js";
import { insertCell } from "./edit.js";

const ANSWER_WAIT = 30_000; // ms: a busy kernel answers late, not never

/**
 * The actions for a record drawn in `node`, found by the notebook panel holding it.
 * @param {any} tracker an INotebookTracker
 * @returns {(node: HTMLElement) => object}
 */
export function cardActions(tracker) {
  return (node) => ({
    undo: (/** @type {string} */ callId) => undo(tracker, node, callId, pageUser()),
    addCell: (/** @type {{source: string, outputs: object[]}} */ cell) =>
      addCell(tracker, node, cell),
    rewind: (/** @type {string} */ requestId, /** @type {boolean} */ confirm) =>
      ask(tracker, node, { request: "rewind", chat_request: requestId, confirm, who: pageUser() }),
    // the review panel's (--edits review): Keep (all) saves the choice, Undo all undoes them
    keep: (/** @type {string[]} */ callIds) =>
      ask(tracker, node, { request: "keep", call_ids: callIds, who: pageUser() }),
    undoAll: (/** @type {string[]} */ callIds) =>
      ask(tracker, node, { request: "undo", call_ids: callIds, who: pageUser() }),
  });
}

/**
 * The panel and the index of the cell whose output holds `node`.
 * @param {any} tracker
 * @param {HTMLElement} node
 */
function locate(tracker, node) {
  /** @type {{panel: any, index: number} | null} */
  let found = null;
  tracker.forEach((/** @type {any} */ panel) => {
    if (found || !panel.node.contains(node)) return;
    const index = panel.content.widgets.findIndex((/** @type {any} */ c) => c.node.contains(node));
    if (index >= 0) found = { panel, index };
  });
  return found;
}

/**
 * Who clicks here: the current user index.js exposes (JupyterLab's identity), or "you". The
 * kernel sanitizes it and saves it on the undo event: a label, never a permission.
 * @returns {{name: string, username: string}}
 */
function pageUser() {
  const read = /** @type {any} */ (globalThis).__jupyter_turns_user;
  const identity = typeof read === "function" ? read() : null;
  const username = typeof identity?.username === "string" ? identity.username : "";
  const name = [identity?.name, identity?.display_name, username].find(
    (n) => typeof n === "string" && n.trim(),
  );
  return name ? { name, username } : { name: "you", username: "" };
}

/**
 * @param {any} tracker
 * @param {HTMLElement} node
 * @param {string} callId
 * @param {{name: string, username: string}} who
 * @returns {Promise<{ok: boolean, reason?: string, lines?: string[]}>}
 */
function undo(tracker, node, callId, who) {
  return ask(tracker, node, { request: "undo", call_id: callId, who });
}

/**
 * Ask the kernel of the notebook holding `node` (undo, rewind).
 * @param {any} tracker
 * @param {HTMLElement} node
 * @param {Record<string, unknown>} request
 * @returns {Promise<{ok: boolean, reason?: string, lines?: string[]}>}
 */
function ask(tracker, node, request) {
  const kernel = locate(tracker, node)?.panel.sessionContext.session?.kernel;
  if (!kernel) {
    return Promise.resolve({
      ok: false,
      reason:
        "No kernel is running. Undo and rewind revert steps in the kernel that made them; a " +
        "restarted kernel holds none of their objects.",
    });
  }
  return askKernel(kernel, request);
}

/**
 * Ask the kernel's `jupyter_turns.control` target one request, on a comm of its own.
 * @param {any} kernel an IKernelConnection
 * @param {Record<string, unknown>} request
 * @returns {Promise<{ok: boolean, reason?: string, lines?: string[], running?: unknown}>}
 */
export function askKernel(kernel, request) {
  return new Promise((resolve) => {
    const requestId = `${String(request.request)}-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const comm = kernel.createComm(CONTROL_TARGET);
    // On the main shell, never a subshell of its own: each request's comm closes at once, and
    // JupyterLab deletes a comm target's subshell when its last comm closes, which dropped
    // the messages still queued there (asyncio's "Task was destroyed" in the next cell, before
    // the kernel loaded jupyter_turns). The kernel answers on its loop either way.
    if ("commsOverSubshells" in comm) comm.commsOverSubshells = "disabled";
    let settled = false;
    const finish = (
      /** @type {{ok: boolean, reason?: string, lines?: string[], running?: unknown}} */ answer,
    ) => {
      if (settled) return; // closing calls onClose, which must not close again
      settled = true;
      clearTimeout(timer);
      resolve(answer);
      if (!comm.isDisposed) comm.close();
    };
    const timer = setTimeout(
      () => finish({ ok: false, reason: "The kernel did not answer (is it busy?)." }),
      ANSWER_WAIT,
    );
    comm.onMsg = (/** @type {any} */ msg) => {
      const data = msg?.content?.data;
      if (data?.request_id !== requestId) return;
      finish({
        ok: data.ok === true,
        reason: data.reason,
        lines: data.lines,
        running: data.running,
      });
    };
    comm.onClose = () =>
      finish({ ok: false, reason: "This kernel has not loaded jupyter_turns (%load_ext)." });
    comm.open({ ...request, request_id: requestId });
  });
}

/**
 * @param {any} tracker
 * @param {HTMLElement} node
 * @param {{source: string, outputs: object[]}} cell
 */
async function addCell(tracker, node, cell) {
  const where = locate(tracker, node);
  const model = where?.panel.content.model;
  if (!where || !model) return { ok: false, reason: "The notebook is not open here." };
  insertCell(model, where.index + 1, { cell_type: "code", ...cell });
  return { ok: true, lines: ["Added below the chat cell."] };
}
