/**
 * "Ask chat" on a code cell's error, in JupyterLab and Notebook 7: a button under each error
 * output. Its click inserts, below the failing cell, a chat cell a person can read
 *
 *   %%chat --fix 19
 *   Why does cell [19] fail, and how do I fix it?
 *
 * (19: the execution count Jupyter shows beside the failing cell, `[19]:`; docs/reading.md,
 * "How cells are named") and runs it. A cell that shows no count, or a count another cell
 * shows too (a restarted kernel counts from 1 again), is asked about as "the cell above". The kernel then reads the
 * notebook and sends the cell's source, its traceback and the variables of the failing line with
 * the request (jupyter_turns/reading/failing.py). The button is page furniture drawn into the
 * rendered output, never part of the output's model: the saved file holds the error as the
 * kernel sent it. Its words are ours, set as textContent.
 *
 * The extension is installed for every notebook of the server: the button shows in Python
 * notebooks only (an R kernel has no %%chat), and the click first loads jupyter_turns in the
 * kernel (`%load_ext`, silently; again is a no-op), so a kernel that never loaded it answers
 * too instead of failing with "Cell magic `%%chat` not found".
 */

import { watchPanel } from "./watch.js";

const BUTTON = "jt-ask-chat";
const CHAT_CELL = /^\s*%%?chat\b/; // a chat cell's own failure is no error in the user's code
const LOAD = "%load_ext jupyter_turns";

/**
 * The source of the chat cell that asks about the error of the cell whose execution count is
 * `count` (null: the cell right above the asking one). The question is reading/failing.py's
 * fix_request (tests/unit/test_failing.py keeps them the same).
 * @param {number | null} count
 */
export function askSource(count) {
  if (count === null)
    return "%%chat --fix above\nWhy does the cell above fail, and how do I fix it?";
  return `%%chat --fix ${count}\nWhy does cell [${count}] fail, and how do I fix it?`;
}

/**
 * The execution count that names `cell` to the kernel: the one Jupyter shows beside it, when
 * no other code cell of the notebook shows it too; else null (ask about "the cell above").
 * @param {any} notebook a Notebook widget
 * @param {any} cell a CodeCell
 * @returns {number | null}
 */
export function shownCount(notebook, cell) {
  const count = cell.model?.executionCount;
  if (!Number.isInteger(count)) return null;
  const same = notebook.widgets.filter(
    (/** @type {any} */ other) =>
      other.model?.type === "code" && other.model.executionCount === count,
  );
  return same.length === 1 ? count : null;
}

/**
 * Whether a notebook's kernel can run `%%chat`: its language, as the notebook's metadata
 * says (the kernel's own `language_info`, else the kernelspec's); unknown counts as Python.
 * @param {{getMetadata?: (key: string) => any} | null | undefined} model a NotebookModel
 */
export function speaksPython(model) {
  const info = model?.getMetadata?.("language_info");
  const spec = model?.getMetadata?.("kernelspec");
  const language = info?.name ?? spec?.language;
  return typeof language !== "string" || language.toLowerCase() === "python";
}

/**
 * Keep the Ask chat buttons of one notebook panel up to date: when cells come and go, when a
 * cell's outputs change, when a windowed cell is drawn.
 * @param {any} panel a NotebookPanel
 * @param {(panel: any) => Promise<unknown>} run runs the panel's active cell
 */
export function watchErrors(panel, run) {
  const code = (/** @type {any} */ cell) => cell.model?.type === "code" && cell.outputArea;
  return watchPanel(panel, {
    cellSignals: (cell) => (code(cell) ? [cell.outputArea.model.changed] : []),
    draw: () => {
      const python = speaksPython(panel.content.model);
      for (const cell of panel.content.widgets) {
        if (code(cell)) drawButtons(cell, python, () => ask(panel, cell, run));
      }
    },
  });
}

/**
 * Give each error output of `cell` its button (once), unless the cell is a chat cell or the
 * notebook is not Python.
 * @param {any} cell a CodeCell
 * @param {boolean} python the notebook's kernel speaks Python
 * @param {() => void} onClick
 */
function drawButtons(cell, python, onClick) {
  const area = cell.outputArea;
  const skip = !python || CHAT_CELL.test(cell.model.sharedModel.getSource());
  for (let i = 0; i < area.model.length; i++) {
    const node = area.widgets[i]?.node.querySelector(".jp-OutputArea-output");
    if (!node) continue;
    const held = node.querySelector(`:scope > .${BUTTON}`);
    const wanted = !skip && area.model.get(i)?.type === "error";
    if (wanted && !held) node.append(makeButton(onClick));
    if (!wanted && held) held.remove();
  }
}

/** @param {() => void} onClick */
function makeButton(onClick) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = BUTTON;
  button.textContent = "Ask chat";
  button.title = "Ask the chat why this cell fails: adds a %%chat cell below and runs it";
  Object.assign(button.style, {
    display: "block",
    margin: "6px 0 2px",
    font: "inherit",
    fontFamily: "var(--jp-ui-font-family)",
    fontSize: "var(--jp-ui-font-size1, 13px)",
    color: "var(--jp-ui-font-color1)",
    background: "var(--jp-layout-color2)",
    border: "1px solid var(--jp-border-color1)",
    borderRadius: "4px",
    padding: "2px 10px",
    cursor: "pointer",
  });
  button.addEventListener("click", (event) => {
    event.stopPropagation(); // the click is the button's, not the output's
    onClick();
  });
  return button;
}

/**
 * Insert the asking chat cell below `cell`, make it the active cell and run it.
 * @param {any} panel
 * @param {any} cell
 * @param {(panel: any) => Promise<unknown>} run
 */
async function ask(panel, cell, run) {
  const notebook = panel.content;
  const index = notebook.widgets.indexOf(cell);
  if (index < 0 || !notebook.model) return;
  notebook.model.sharedModel.insertCell(index + 1, {
    cell_type: "code",
    source: askSource(shownCount(notebook, cell)),
    metadata: {},
    outputs: [],
    execution_count: null,
  });
  notebook.deselectAll();
  notebook.activeCellIndex = index + 1;
  // ahead of the chat cell on the kernel's shell channel: %%chat exists when it runs
  panel.sessionContext?.session?.kernel?.requestExecute({
    code: LOAD,
    silent: true,
    store_history: false,
  });
  await run(panel);
}
