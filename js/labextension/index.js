/**
 * JupyterLab 4 / Notebook 7 plugin: lets the kernel write cell and notebook metadata, draws
 * saved conversation records (record.js) and keeps a chat cell whose turn never finished
 * readable (turns.js).
 *
 * Kernel code cannot set metadata through the messaging protocol (docs/architecture.md, "Facts the design depends on"). For every
 * notebook, this plugin registers the comm target `jupyter_turns.metadata` on the notebook's
 * kernel connection (again whenever the kernel changes). The kernel opens a comm on it and sends
 *
 *   {cell_id: "<id>", key: "jupyter_turns", value: {...}}              -> cell metadata
 *   {cell_id: null, scope: "notebook", key: "jupyter_turns", value}    -> notebook metadata
 *   add `delete: true` (value ignored) to remove the key instead
 *
 * in the comm_open data and/or in later comm messages. Each request is answered on the same
 * comm with `{ok: true}` or `{ok: false, reason}`. The change marks the notebook dirty; the
 * frontend saves it like any edit.
 *
 * A message with a `request` key asks instead of writing (cells.js), answered on the same comm:
 *
 *   {request: "cells", request_id: "<id>"}
 *     -> {request_id, ok: true, path: <notebook path or null>, dirty: <has unsaved changes>,
 *         cells: [{id, cell_type, source, execution_count, outputs}, ...]}
 *     -> {request_id, ok: false, reason}    (unknown request, no request_id, closed notebook)
 *
 * Other requests change cells (edit.js: insert_cell, set_source, delete_cell, set_outputs,
 * replace_record), for the model's insert_cell / edit_cell and for undo; a change may carry the
 * cell's provenance stamp (provenance.js), which each notebook shows as a badge on the cell
 * that leads to the turn's card (badges.js). Each error output of a code cell gets an Ask chat
 * button, drawn in the page only (errors.js).
 *
 * The cells are the live model's (unsaved edits included), without cell metadata or
 * attachments; `source` is one string; non-code cells have `execution_count: null` and no
 * outputs. An output holding a chat record or a widget becomes `{output_type, data:
 * {"text/plain": ...}, metadata: {}, jupyter_turns: true}`; other outputs are sent as saved.
 */
import { INotebookTracker, NotebookActions } from "@jupyterlab/notebook";
import { IRenderMimeRegistry } from "@jupyterlab/rendermime";
import { askKernel, cardActions } from "./actions.js";
import { answerRequest, isRequest } from "./cells.js";
import { COMM_TARGET, HTML_ON_SAVE } from "./constants.js";
import { showCell, watchBadges } from "./badges.js";
import { answerEdit, endRuns, followRun, trustLive } from "./edit.js";
import { watchErrors } from "./errors.js";
import { applyMetadata } from "./metadata.js";
import { loadBundle, recordRendererFactory, setCardActions } from "./record.js";
import { actsHere, alone, announceKernelClient, clickerIdentity, othersOn } from "./shared.js";
import { joinEndedTurns, keepAllWhenCleared, showUnfinishedTurns } from "./turns.js";
import { vouches } from "./vouch.js";

/**
 * The notebook's path on the server: `localPath` is `path` without a drive prefix (a
 * collaborative drive's `RTC:`), the same for the default drive.
 * @param {any} context
 * @returns {string | null}
 */
function notebookPath(context) {
  const path = context.localPath ?? context.path;
  return typeof path === "string" ? path : null;
}

/**
 * The shared document's awareness when real-time collaboration shares this notebook between
 * pages (shared.js), else null: the page's own copy.
 * @param {any} context
 * @returns {any}
 */
function sharedAwareness(context) {
  const model = context.isDisposed ? null : context.model;
  return model?.collaborative ? (model.sharedModel?.awareness ?? null) : null;
}

/** @type {boolean | null} read once (htmlOnSave): the page's configuration does not change */
let savesHtml = null;

/**
 * Whether this page's server adds a finished record's HTML transcript as it saves a notebook
 * (the package's server extension, jupyter_turns/server_extension/, says so in the page configuration).
 * The page's answers then tell the kernel, which leaves the transcript out of the final records
 * this page saves: the page draws the record, and the file gets the transcript from the server.
 */
function htmlOnSave() {
  if (savesHtml === null) {
    const node = document.getElementById("jupyter-config-data");
    try {
      savesHtml = JSON.parse(node?.textContent || "{}")[HTML_ON_SAVE] === true;
    } catch {
      savesHtml = false;
    }
  }
  return savesHtml;
}

/**
 * The answer to one comm message: a request (cells.js) or a metadata write (metadata.js); null
 * when another page of the shared document acts on it (shared.js). Every page keeps the
 * kernel's vouch for a running turn's widget (vouch.js). Every answer says `html_on_save`
 * where this page's server adds the transcripts (htmlOnSave): the kernel hears it with its
 * first message of a turn (`trust_live`, before the widget shows).
 * @param {any} context the notebook's DocumentRegistry.IContext
 * @param {unknown} data
 * @param {unknown} session the message's `parent_header.session`
 * @param {(data: unknown) => void} vouch
 * @returns {object | null}
 */
function reply(context, data, session, vouch) {
  const answer = answerTo(context, data, session, vouch);
  return answer && htmlOnSave() ? { ...answer, html_on_save: true } : answer;
}

/**
 * The answer itself, to which reply() adds the word on transcripts.
 * @param {any} context
 * @param {unknown} data
 * @param {unknown} session
 * @param {(data: unknown) => void} vouch
 * @returns {object | null}
 */
function answerTo(context, data, session, vouch) {
  const model = context.isDisposed ? null : context.model;
  vouch(data);
  const reads = isRequest(data) && /** @type {any} */ (data).request === "cells";
  const client = context.sessionContext?.session?.kernel?.clientId ?? null;
  if (!reads && !actsHere(sharedAwareness(context), session)) {
    if (isRequest(data)) {
      trustLive(model, /** @type {Record<string, any>} */ (data));
      followRun(model, /** @type {Record<string, any>} */ (data), client);
    }
    return null;
  }
  if (isRequest(data)) {
    const request = /** @type {Record<string, any>} */ (data);
    return reads
      ? answerRequest(model, data, () => notebookPath(context))
      : answerEdit(model, request, () => notebookPath(context), client);
  }
  try {
    return applyMetadata(model, data);
  } catch (err) {
    return { ok: false, reason: `failed to set metadata: ${String(err)}` };
  }
}

/**
 * Register the comm target on a kernel connection; the handler looks the model up lazily
 * because the document model outlives neither a closed notebook nor a reload.
 * @param {any} kernel an IKernelConnection
 * @param {any} context the notebook's DocumentRegistry.IContext
 * @param {(data: unknown) => void} vouch this document's vouches (vouch.js)
 */
function registerOn(kernel, context, vouch) {
  if (!kernel || kernel.isDisposed) {
    return;
  }
  kernel.registerCommTarget(COMM_TARGET, (/** @type {any} */ comm, /** @type {any} */ openMsg) => {
    /** @param {any} msg */
    const handle = (msg) => {
      const answer = reply(context, msg?.content?.data, msg?.parent_header?.session, vouch);
      if (answer && !comm.isDisposed) {
        comm.send(answer);
      }
    };
    comm.onMsg = handle;
    const openData = openMsg?.content?.data;
    if (isRequest(openData) || (openData && typeof openData === "object" && "key" in openData)) {
      handle(openMsg);
    }
  });
  announceKernelClient(sharedAwareness(context), kernel.clientId);
}

/**
 * Tell the kernel this page has the notebook open (loaded, reloaded, a second tab, reconnected
 * after a drop): it sends back, on the metadata comm, each running turn's widget and each
 * finished turn's record, which the file this page loaded does not hold (edit.js show_live,
 * show_record), and answers with the ids of the cells whose turn runs now. It names the
 * notebook's path on the server (relative to the server's root), so the kernel reads no
 * instruction file (AGENTS.md) above that root. A kernel without jupyter_turns loaded closes
 * the comm: nothing to do.
 * @param {any} kernel an IKernelConnection
 * @param {any} context the notebook's DocumentRegistry.IContext
 * @returns {Promise<Set<string>>} the cells whose turn runs (none when the kernel did not say)
 */
async function announcePage(kernel, context) {
  if (!kernel || kernel.isDisposed) return new Set();
  try {
    const answer = await askKernel(kernel, { request: "page", path: notebookPath(context) });
    const running = Array.isArray(answer.running) ? answer.running : [];
    return new Set(running.filter((id) => typeof id === "string"));
  } catch {
    return new Set();
  }
}

/** ms a page opening a notebook waits for its kernel before showing dead turns' records. */
const KERNEL_WAIT = 30_000;

/** @param {number} ms */
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * What each live chat view of this document still shows, by cell index.
 * @param {any} tracker an INotebookTracker
 * @param {any} context
 * @returns {Map<number, object[]>}
 */
function shownByLiveViews(tracker, context) {
  const shown = new Map();
  tracker.forEach((/** @type {any} */ panel) => {
    if (panel.context !== context) return;
    panel.content.widgets.forEach((/** @type {any} */ cell, /** @type {number} */ i) => {
      const root = cell.node.querySelector(".jt-root:not(.jt-saved)");
      if (root?.jtSnapshot && !shown.has(i)) shown.set(i, root.jtSnapshot());
    });
  });
  return shown;
}

/**
 * The cell widgets of one cell in this page's views of the document.
 * @param {any} tracker an INotebookTracker
 * @param {any} context
 * @param {string} cellId
 * @returns {any[]}
 */
function cellsOf(tracker, context, cellId) {
  /** @type {any[]} */
  const cells = [];
  tracker.forEach((/** @type {any} */ panel) => {
    if (panel.context !== context) return;
    for (const cell of panel.content.widgets) if (cell.model?.id === cellId) cells.push(cell);
  });
  return cells;
}

/**
 * A headless turn that ended as live parts shows as one output at once (turns.js
 * joinEndedTurns): a finished turn, no kernel to wait for. The page's copy then differs from
 * the file only in how the same turn is laid out, so a document that was clean stays clean
 * (a shared one is saved by the server).
 * @param {any} context
 */
function showEndedTurns(context) {
  const model = context.isDisposed ? null : context.model;
  const clean = model && !model.dirty;
  if (joinEndedTurns(model) && clean && !sharedAwareness(context)) model.dirty = false;
}

/**
 * Watch one notebook document (shared by all its views) for kernel changes.
 * @param {any} context a DocumentRegistry.IContext<INotebookModel>
 * @param {WeakSet<object>} watched
 * @param {any} tracker the INotebookTracker (its panels hold the live views)
 */
function watchContext(context, watched, tracker) {
  if (watched.has(context)) {
    return;
  }
  watched.add(context);
  const sessionContext = context.sessionContext;
  const getModel = () => (context.isDisposed ? null : context.model);
  // Comm targets live on the kernel connection object, which survives restarts; a new
  // connection (kernel switched, session re-created) arrives through kernelChanged.
  const kernel = () => sessionContext.session?.kernel;
  const vouch = vouches((cellId) => cellsOf(tracker, context, cellId));
  let opened = false; // the page said it opened the notebook (below); later: a new kernel
  sessionContext.kernelChanged.connect((/** @type {any} */ _, /** @type {any} */ change) => {
    registerOn(change.newValue, context, vouch);
    if (opened) void announcePage(change.newValue, context);
  });
  registerOn(kernel(), context, vouch);
  // back from a network drop: what the kernel sent meanwhile never arrived
  sessionContext.connectionStatusChanged.connect(
    (/** @type {any} */ _, /** @type {string} */ s) => {
      if (s === "connected" && opened) void announcePage(kernel(), context);
    },
  );
  // A kernel that died or restarted mid-turn leaves a chat cell's live widget behind: show the
  // turn the kernel saved instead. The same on opening a file saved in that state.
  // (in a shared document every page sees it: one of them writes, shared.js)
  sessionContext.statusChanged.connect((/** @type {any} */ _, /** @type {string} */ status) => {
    const dying = status === "dead" || status === "restarting" || status === "autorestarting";
    if (dying) endRuns(getModel()); // cells this page showed running for the kernel
    if (dying && actsHere(sharedAwareness(context), null)) {
      showUnfinishedTurns(getModel(), shownByLiveViews(tracker, context));
    }
  });
  context.ready.then(async () => {
    announceKernelClient(sharedAwareness(context), kernel()?.clientId);
    keepAllWhenCleared(getModel());
    if (alone(sharedAwareness(context))) showEndedTurns(context);
    // the kernel the notebook gets (a page opening mid-turn: the one running the turn)
    await Promise.race([sessionContext.ready.catch(() => {}), delay(KERNEL_WAIT)]);
    opened = true;
    // a turn the kernel runs keeps its live widget; a page joining others on a shared
    // document leaves it as they keep it
    const running = await announcePage(kernel(), context);
    if (alone(sharedAwareness(context))) showUnfinishedTurns(getModel(), new Map(), running);
  });
}

/** A JupyterFrontEndPlugin<void>. */
const plugin = {
  id: "jupyter_turns:metadata",
  description: "Lets the jupyter_turns kernel code write cell and notebook metadata.",
  autoStart: true,
  requires: [INotebookTracker, IRenderMimeRegistry],
  activate: (/** @type {any} */ app, /** @type {any} */ tracker, /** @type {any} */ rendermime) => {
    // who clicks in this page (JupyterLab's current user), for the widget's views, which have
    // no app: read at each click (the identity arrives after start-up); a made-up anonymous
    // name only while someone else is on an open notebook (shared.js, clickerIdentity)
    /** @type {any} */ (globalThis).__jupyter_turns_user = () =>
      clickerIdentity(app?.serviceManager?.user?.identity ?? null, (username) => {
        let others = false;
        tracker.forEach((/** @type {any} */ panel) => {
          others ||= othersOn(sharedAwareness(panel.context), username);
        });
        return others;
      });
    // ahead of text/html (rank 50), so the record's own view wins over its HTML fallback
    rendermime.addFactory(recordRendererFactory, 0);
    setCardActions(cardActions(tracker));
    // a %chat serve widget's cards (live for long) get Undo too (live/view.js)
    /** @type {any} */ (globalThis).__jupyter_turns_card_actions = cardActions(tracker);
    // a card's "Go to cell" (the widget's views have no app, like the user above)
    /** @type {any} */ (globalThis).__jupyter_turns_show_cell = (
      /** @type {HTMLElement | null} */ from,
      /** @type {string} */ cellId,
    ) => showCell(tracker, from, cellId);
    loadBundle().catch(() => {}); // a renderer that needs it reports the failure
    const watched = new WeakSet();
    const watch = (/** @type {any} */ panel) => {
      watchContext(panel.context, watched, tracker);
      watchBadges(panel, () => notebookPath(panel.context));
      // Ask chat under each error output (errors.js)
      watchErrors(panel, (/** @type {any} */ p) =>
        NotebookActions.run(p.content, p.sessionContext),
      );
    };
    tracker.forEach(watch);
    tracker.widgetAdded.connect((/** @type {any} */ _, /** @type {any} */ panel) => watch(panel));
  },
};

export default plugin;
