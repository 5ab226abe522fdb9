/**
 * The provenance badge of a cell the model changed, in JupyterLab and Notebook 7: a small line
 * above the cell ("from chat · turn 3") whose click scrolls to that call's card in the chat
 * cell holding the turn; and the way back, a card's "Go to cell" (`showCell`, which the
 * widget's cards call through `window.__jupyter_turns_show_cell`).
 *
 * The stamp is read from the cell's metadata and checked (provenance.js readStamp): a stamp
 * of any other shape shows no badge, and every word of it is set as textContent (a title as
 * an attribute value), never as HTML. The badge is page furniture, not an output: the saved
 * file holds the stamp only, so `jupyter nbconvert` and other readers show nothing of it.
 */
import { watchPanel } from "./watch.js";
import { badgeText, badgeTitle, notHere, readStamp, savedStamp, turnCell } from "./provenance.js";

const BADGE = "jt-provenance";
const FLASH_MS = 1500;
const CARD_WAIT_MS = 5000; // a saved record draws once the widget bundle has loaded

/**
 * Keep the badges of one notebook panel up to date: when cells come and go, when a cell's
 * metadata changes, when the notebook is renamed.
 * @param {any} panel a NotebookPanel
 * @param {() => string | null} getPath the notebook's path
 */
export function watchBadges(panel, getPath) {
  return watchPanel(panel, {
    cellSignals: (cell) => [cell.model.metadataChanged],
    draw: () => drawBadges(panel, getPath()),
    panelSignals: [panel.context.pathChanged],
  });
}

/**
 * Give every stamped cell its badge, and take it from every other cell.
 * @param {any} panel
 * @param {string | null} path
 */
function drawBadges(panel, path) {
  const model = panel.content.model;
  for (const cell of panel.content.widgets) {
    const stamp = readStamp(savedStamp(cell.model));
    // the cell's header: an empty widget of its own above the input, where nothing else draws
    const header = cell.node.querySelector(":scope > .jp-CellHeader");
    const held = /** @type {HTMLElement | null} */ (header?.querySelector(`.${BADGE}`) ?? null);
    if (!stamp || !header) {
      if (held) {
        held.remove();
        /** @type {HTMLElement} */ (header).style.height = "";
      }
      continue;
    }
    const found = turnCell(model, stamp);
    const text = badgeText(stamp, { path, here: found !== null });
    const badge = held ?? makeBadge(header);
    const button = /** @type {HTMLButtonElement} */ (badge.firstChild);
    button.textContent = text;
    button.title = badgeTitle(stamp);
    button.onclick = () => {
      const note = /** @type {HTMLElement} */ (badge.lastChild);
      const target = turnCell(panel.content.model, stamp); // where it is at the click
      note.textContent = target ? "" : notHere(stamp, path);
      if (target) reveal(panel, target.index, target.exact ? stamp.call_id : null);
    };
  }
}

/**
 * A badge line in the cell's header: a text button and a note beside it.
 * @param {Element} header
 */
function makeBadge(header) {
  const badge = document.createElement("div");
  badge.className = BADGE;
  Object.assign(badge.style, {
    display: "flex",
    gap: "8px",
    alignItems: "baseline",
    paddingLeft: "var(--jp-cell-prompt-width, 64px)",
    fontSize: "var(--jp-ui-font-size0, 11px)",
    color: "var(--jp-ui-font-color2)",
  });
  const button = document.createElement("button");
  button.type = "button";
  button.className = `${BADGE}-badge`;
  Object.assign(button.style, {
    font: "inherit",
    color: "inherit",
    background: "var(--jp-layout-color2)",
    border: "1px solid var(--jp-border-color2)",
    borderRadius: "8px",
    padding: "0 6px",
    cursor: "pointer",
  });
  const note = document.createElement("span");
  note.className = `${BADGE}-note`;
  note.setAttribute("aria-live", "polite");
  badge.append(button, note);
  header.append(badge);
  /** @type {HTMLElement} */ (header).style.height = "auto"; // JupyterLab draws it 0 px high
  return badge;
}

/**
 * Scroll the notebook to cell `index` and, within it, to the tool card of `callId` (when
 * given and drawn), and mark what it scrolled to for a moment.
 * @param {any} panel
 * @param {number} index
 * @param {string | null} callId
 */
async function reveal(panel, index, callId) {
  const notebook = panel.content;
  try {
    await notebook.scrollToItem?.(index, "start");
  } catch {
    // an older notebook without a windowed list: scrollIntoView below still brings it
  }
  const cell = notebook.widgets[index];
  if (!cell) return;
  const selector = callId ? `.jt-tool[data-call-id="${CSS.escape(callId)}"]` : null;
  const card = selector ? await appears(cell.node, selector) : null;
  const target = card ?? cell.node;
  target.scrollIntoView({ block: card ? "center" : "start" });
  flash(target);
}

/**
 * The element matching `selector` in `root`, once it is there (null after a while).
 * @param {HTMLElement} root
 * @param {string} selector
 * @returns {Promise<HTMLElement | null>}
 */
function appears(root, selector) {
  const started = Date.now();
  return new Promise((resolve) => {
    const look = () => {
      const found = /** @type {HTMLElement | null} */ (root.querySelector(selector));
      if (found || Date.now() - started > CARD_WAIT_MS) resolve(found);
      else requestAnimationFrame(look);
    };
    look();
  });
}

/** @param {HTMLElement} node */
function flash(node) {
  node.style.outline = "2px solid var(--jp-brand-color1)";
  setTimeout(() => (node.style.outline = ""), FLASH_MS);
}

/**
 * Scroll to the cell with this id and make it the active cell: in the notebook whose page
 * holds `from` (the card clicked), else the current one.
 * @param {any} tracker an INotebookTracker
 * @param {HTMLElement | null} from
 * @param {string} cellId
 * @returns {Promise<{ok: boolean, reason?: string}>}
 */
export async function showCell(tracker, from, cellId) {
  /** @type {any} */
  let panel = null;
  tracker.forEach((/** @type {any} */ p) => {
    if (!panel && from && p.node.contains(from)) panel = p;
  });
  panel ??= tracker.currentWidget;
  const index = panel
    ? panel.content.widgets.findIndex((/** @type {any} */ c) => c.model.id === cellId)
    : -1;
  if (index < 0) return { ok: false, reason: "That cell is no longer in this notebook." };
  panel.content.activeCellIndex = index;
  await reveal(panel, index, null);
  return { ok: true };
}
