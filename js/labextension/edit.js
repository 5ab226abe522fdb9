/**
 * Change the notebook's cells for the kernel (`jupyter_turns/editing/page.py`): requests on the
 * `jupyter_turns.metadata` comm, each answered `{request_id, ok: true, ...}` or
 * `{request_id, ok: false, reason}`. No Jupyter imports: runs (and is tested) anywhere.
 *
 *   {request: "insert_cell", after, cell_type, source}   -> {cell_id, index, cell}  below `after`
 *   {request: "insert_cell", index, cell}                -> {cell_id, index, cell}  a deleted
 *                                                           cell put back (outputs, metadata)
 *   {request: "set_source", cell_id, source, expected}   -> {index, cell}
 *   {request: "delete_cell", cell_id, expected}          -> {cell, removed, cells}
 *   {request: "move_cell", cell_id, to, expected}        -> {cell}
 *   {request: "set_outputs", cell_id, outputs, execution_count, expected?} -> {cell}
 *   {request: "replace_record", cell_id, bundle}          -> {}  the chat record the cell shows
 *   {request: "show_live", cell_id, model_id}             -> {}  the running turn's widget
 *   {request: "show_record", cell_id, bundle}             -> {}  a finished turn's record
 *   {request: "trust_live", cell_id, model_id}            -> {}  the kernel vouches for the
 *                                                           widget it is about to show there
 *   {request: "cell_run", cell_id, running, execution_count, runner}
 *                                                        -> {}  the cell's prompt: [*] while a
 *                                                           turn runs there, then its count
 *
 * The last two reach a page opened during or after a turn (reloaded, a second tab, reconnected:
 * `jupyter_turns/kernel/front.py` page_opened), whose file never held what the kernel did since:
 * the cell's outputs become the widget, or the record (unless the cell already holds that
 * record), with the metadata pointing at it so that saving keeps it. Such a page never hears
 * of the run from Jupyter either (only the page that asked for it does): `cell_run` gives it
 * the cell's state, so every page shows `[*]` while the turn runs and its count once it ended.
 *
 * A change that replaces or removes text names the text it `expected`; a cell holding anything
 * else (the user typed meanwhile) is refused, never overwritten.
 *
 * `insert_cell` (new), `set_source` and `set_outputs` may carry `provenance`: the cell's stamp
 * (provenance.js), written with the cell in the same request (a new cell holds it from the
 * start; new text and its stamp are one transaction, which the notebook's own undo takes
 * whole), with this notebook's path when it names none; `provenance: null` removes
 * the cell's stamp (undo of a change to a cell that had none), no `provenance` leaves it.
 *
 * Every change answers with `cell`, the page's report of the cell afterwards (cells.js
 * `cellJson`, with its stamp, and its `index`; a deleted cell: as it was, where it was), read
 * back from the model after the change: the kernel's result says what the notebook holds, not
 * what it asked.
 * `removed` is a deleted cell's whole JSON, which undo puts back.
 */
import {
  METADATA_KEY as KEY,
  MISSING_REQUEST_ID,
  NOTEBOOK_CLOSED,
  RECORD_MIME,
  WIDGET_MIME,
} from "./constants.js";
import { cellJson } from "./cells.js";
import { writeStamp } from "./provenance.js";
import { keepWhenCleared, outputData, pointerTo } from "./turns.js";

/**
 * @typedef {{id: string, type?: string, sharedModel: {getSource(): string,
 *            setSource(s: string): void},
 *            outputs?: {length: number, get(i: number): {data?: Record<string, unknown>},
 *                       set(i: number, o: object): void, clear(): void, add(o: object): void},
 *            executionCount?: number | null, executionState?: string, trusted?: boolean,
 *            getMetadata?(k: string): unknown,
 *            setMetadata?(k: string, v: unknown): void, deleteMetadata?(k: string): void}} CellLike
 * @typedef {{cells: {length: number, get(i: number): CellLike},
 *            sharedModel: {insertCell(i: number, cell: object): unknown,
 *                          deleteCell(i: number): void,
 *                          moveCell(from: number, to: number): void,
 *                          transact?(fn: () => void): void}}} NotebookLike
 */

export const EDIT_REQUESTS = [
  "insert_cell",
  "set_source",
  "delete_cell",
  "move_cell",
  "set_outputs",
  "replace_record",
  "show_live",
  "show_record",
  "trust_live",
  "cell_run",
];

/**
 * Answer one edit request.
 * @param {NotebookLike | null} model
 * @param {Record<string, any>} data
 * @param {() => string | null} [getPath] the notebook's path, which a new stamp records
 * @param {string | null} [client] this page's kernel connection (`kernel.clientId`)
 */
export function answerEdit(model, data, getPath = () => null, client = null) {
  const requestId = typeof data.request_id === "string" ? data.request_id : null;
  try {
    if (requestId === null) throw new Refused(MISSING_REQUEST_ID);
    if (!model) throw new Refused(NOTEBOOK_CLOSED);
    if (data.request === "cell_run") {
      cellRun(find(model, data.cell_id).cell, data, client);
      return { request_id: requestId, ok: true };
    }
    return { request_id: requestId, ok: true, ...apply(model, data, getPath) };
  } catch (err) {
    const reason = err instanceof Refused ? err.message : `failed: ${String(err)}`;
    return { request_id: requestId, ok: false, reason };
  }
}

class Refused extends Error {}

/**
 * Make `change` one change of the notebook (one transaction where the model has them).
 * @param {NotebookLike} model
 * @param {() => void} change
 */
function atOnce(model, change) {
  if (model.sharedModel.transact) model.sharedModel.transact(change);
  else change();
}

/**
 * Write the request's stamp on the cell, if it carries one (null: remove the cell's).
 * @param {CellLike} cell
 * @param {Record<string, any>} data
 * @param {() => string | null} getPath
 */
function stampCell(cell, data, getPath) {
  if ("provenance" in data) writeStamp(cell, data.provenance, getPath());
}

/**
 * @param {NotebookLike} model
 * @param {Record<string, any>} data
 * @param {() => string | null} getPath
 * @returns {object}
 */
function apply(model, data, getPath) {
  switch (data.request) {
    case "insert_cell": {
      const index = data.cell ? restoreIndex(model, data.index) : find(model, data.after).index + 1;
      if (data.cell) insertJson(model, index, data.cell);
      else {
        const type = data.cell_type === "markdown" ? "markdown" : "code";
        const metadata = {};
        if ("provenance" in data) writeStamp(metadataOf(metadata), data.provenance, getPath());
        insertCell(model, index, { cell_type: type, source: text(data.source), metadata });
      }
      const id = model.cells.get(index).id;
      return { cell_id: id, index, cell: report(model, id) };
    }
    case "set_source": {
      const { cell, index } = find(model, data.cell_id);
      expect(cell, data.expected);
      atOnce(model, () => {
        cell.sharedModel.setSource(text(data.source));
        stampCell(cell, data, getPath);
      });
      return { index, cell: report(model, data.cell_id) };
    }
    case "delete_cell": {
      const { cell, index } = find(model, data.cell_id);
      expect(cell, data.expected);
      const was = { ...cellJson(/** @type {any} */ (cell)), index };
      const removed = /** @type {any} */ (cell).toJSON();
      model.sharedModel.deleteCell(index);
      if (findIndex(model, data.cell_id) >= 0) throw new Refused("the cell is still there");
      return { cell: was, removed, cells: model.cells.length };
    }
    case "move_cell": {
      const { cell, index } = find(model, data.cell_id);
      expect(cell, data.expected);
      const to = Number(data.to);
      if (!Number.isInteger(to) || to < 0 || to >= model.cells.length)
        throw new Refused(`no index ${String(data.to)} (${model.cells.length} cells)`);
      model.sharedModel.moveCell(index, to);
      return { cell: report(model, data.cell_id) };
    }
    case "set_outputs": {
      const { cell } = find(model, data.cell_id);
      if (!cell.outputs || cell.type !== "code") throw new Refused("not a code cell");
      if (data.expected !== undefined) expect(cell, data.expected);
      // not one transaction: the outputs model syncs itself with the shared model as each
      // change is made (a transaction would defer that); the stamp follows in the same task
      cell.outputs.clear();
      for (const output of Array.isArray(data.outputs) ? data.outputs : [])
        cell.outputs.add(output);
      cell.executionCount = typeof data.execution_count === "number" ? data.execution_count : null;
      stampCell(cell, data, getPath);
      return { cell: report(model, data.cell_id) };
    }
    case "replace_record":
      replaceRecord(find(model, data.cell_id).cell, data.bundle);
      return {};
    case "show_live":
      showLive(find(model, data.cell_id).cell, data.model_id);
      return {};
    case "show_record":
      showRecord(find(model, data.cell_id).cell, data.bundle);
      return {};
    case "trust_live":
      trustLive(model, data);
      return {};
    default:
      throw new Refused(`unknown request: ${String(data.request)}`);
  }
}

/**
 * A plain metadata object seen as a cell's metadata, for writeStamp.
 * @param {Record<string, unknown>} metadata
 */
function metadataOf(metadata) {
  return {
    getMetadata: (/** @type {string} */ key) => metadata[key],
    setMetadata: (/** @type {string} */ key, /** @type {unknown} */ value) => {
      metadata[key] = value;
    },
    deleteMetadata: (/** @type {string} */ key) => {
      delete metadata[key];
    },
  };
}

/**
 * Insert a cell (a code cell with its outputs, when given) at `index`.
 * @param {NotebookLike} model
 * @param {number} index
 * @param {{cell_type: string, source: string, outputs?: object[],
 *          metadata?: Record<string, unknown>}} cell
 */
export function insertCell(model, index, cell) {
  const code = cell.cell_type === "code";
  model.sharedModel.insertCell(index, {
    cell_type: cell.cell_type,
    source: cell.source,
    metadata: cell.metadata ?? {},
    ...(code ? { outputs: cell.outputs ?? [], execution_count: null } : {}),
  });
}

/**
 * The cell as the notebook holds it now, read back after a change: `cellJson` and its index.
 * @param {NotebookLike} model
 * @param {unknown} cellId
 */
function report(model, cellId) {
  const { cell, index } = find(model, cellId);
  return { ...cellJson(/** @type {any} */ (cell)), index };
}

/**
 * Put a deleted cell's saved JSON back at `index` (its outputs and metadata too).
 * @param {NotebookLike} model
 * @param {number} index
 * @param {Record<string, any>} cell
 */
function insertJson(model, index, cell) {
  const type = cell.cell_type === "markdown" || cell.cell_type === "raw" ? cell.cell_type : "code";
  model.sharedModel.insertCell(index, {
    ...(freeId(model, cell.id) ? { id: cell.id } : {}),
    cell_type: type,
    source: Array.isArray(cell.source) ? cell.source.join("") : text(cell.source),
    metadata: cell.metadata && typeof cell.metadata === "object" ? cell.metadata : {},
    ...(type === "code"
      ? {
          outputs: Array.isArray(cell.outputs) ? cell.outputs : [],
          execution_count: typeof cell.execution_count === "number" ? cell.execution_count : null,
        }
      : {}),
  });
}

/**
 * Whether a deleted cell can come back under its own id (an nbformat cell id no cell holds
 * now): then a step made before the deletion, which names the cell by id, still finds it.
 * @param {NotebookLike} model
 * @param {unknown} id
 */
function freeId(model, id) {
  if (typeof id !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) return false;
  for (let i = 0; i < model.cells.length; i++) if (model.cells.get(i).id === id) return false;
  return true;
}

/**
 * Where a deleted cell goes back: its index then, or the end of a notebook now shorter.
 * @param {NotebookLike} model
 * @param {unknown} index
 */
function restoreIndex(model, index) {
  const at = Number(index);
  if (!Number.isInteger(at) || at < 0) throw new Refused(`no index ${String(index)}`);
  return Math.min(at, model.cells.length);
}

/**
 * The index of the cell with this id, or -1.
 * @param {NotebookLike} model
 * @param {unknown} cellId
 */
function findIndex(model, cellId) {
  for (let index = 0; index < model.cells.length; index++)
    if (model.cells.get(index).id === cellId) return index;
  return -1;
}

/**
 * The cell with this id and its index.
 * @param {NotebookLike} model
 * @param {unknown} cellId
 */
export function find(model, cellId) {
  const index = findIndex(model, cellId);
  if (index >= 0) return { cell: model.cells.get(index), index };
  throw new Refused(`no cell with id ${String(cellId)} in this notebook (was it deleted?)`);
}

/**
 * @param {CellLike} cell
 * @param {unknown} expected
 */
function expect(cell, expected) {
  if (cell.sharedModel.getSource() !== text(expected)) {
    throw new Refused("the cell changed since (its text is not what was expected): left as it is");
  }
}

/** @param {unknown} value */
function text(value) {
  return typeof value === "string" ? value : "";
}

/**
 * Put the bundle's record where the cell keeps its chat record: the output holding the same
 * run of that conversation, else the metadata (after Clear Outputs it holds the record).
 * A run is known by its first event: a cell run again continues the same conversation with a
 * new turn, and a change meant for its earlier run (a re-run above marking it "Rewound") must
 * not land on the new one when it arrives late.
 * @param {CellLike} cell
 * @param {unknown} bundle
 */
function replaceRecord(cell, bundle) {
  const data = /** @type {Record<string, any>} */ (
    bundle && typeof bundle === "object" ? bundle : {}
  );
  const record = data[RECORD_MIME];
  if (!record || typeof record !== "object") throw new Refused("the bundle holds no record");
  const outputs = cell.outputs;
  for (let j = (outputs?.length ?? 0) - 1; outputs && j >= 0; j--) {
    const held = /** @type {any} */ (outputs.get(j).data?.[RECORD_MIME]);
    if (sameRun(held, record)) {
      outputs.set(j, { output_type: "display_data", data, metadata: {} });
      keepWhenCleared(/** @type {any} */ (cell), record);
      return;
    }
  }
  const saved = /** @type {any} */ (cell.getMetadata?.(KEY));
  if (Array.isArray(saved?.events) && sameRun(saved, record)) {
    cell.setMetadata?.(KEY, record);
    return;
  }
  throw new Refused("the cell no longer shows that run of the conversation");
}

/**
 * Whether `held` (a record a cell shows) is the run `record` updates: the same conversation,
 * and the same first event where both have one.
 * @param {any} held
 * @param {any} record
 */
function sameRun(held, record) {
  if (held?.conversation_id !== record.conversation_id) return false;
  const first = (/** @type {any} */ r) => (Array.isArray(r?.events) ? r.events[0]?.id : undefined);
  const [was, now] = [first(held), first(record)];
  return was === undefined || now === undefined || was === now;
}

/**
 * A running turn's cell is trusted in this page (`trust_live`, sent by the kernel before the
 * turn's widget, and `show_live` where another page of a shared document writes it, shared.js):
 * the widget view renders only in a trusted output, and the kernel running this cell vouches
 * for it, as for a run's outputs. Only while the cell holds no output: trusting outputs
 * rewrites them, which in a shared document is a second write racing the page that runs the
 * cell (a widget view rewritten so loses its display id, and the turn's record with it); a
 * page that gets the view first draws it itself (vouch.js).
 * @param {NotebookLike | null} model
 * @param {Record<string, any>} data
 */
export function trustLive(model, data) {
  if ((data.request !== "show_live" && data.request !== "trust_live") || !model) return;
  for (let index = 0; index < model.cells.length; index++) {
    const cell = model.cells.get(index);
    const empty = (cell.outputs?.length ?? 0) === 0;
    if (cell.id === data.cell_id && empty && "trusted" in cell && !cell.trusted) {
      cell.trusted = true;
    }
  }
}

/**
 * A `cell_run` in a page that does not act on the kernel's requests (shared.js actsHere): it
 * applies it all the same. The cell's state is the kernel's and writing it twice writes the
 * same value, while the page that acts may be one that went away: the page that ran the cell,
 * reloaded, whose awareness state outlives it for a while (the turn's end answers its request),
 * so that no page would show the cell ended. Anything else, and a cell not here: nothing.
 * @param {NotebookLike | null} model
 * @param {Record<string, any>} data
 * @param {string | null} client this page's kernel connection
 */
export function followRun(model, data, client) {
  if (data.request !== "cell_run" || !model) return;
  for (let index = 0; index < model.cells.length; index++) {
    const cell = model.cells.get(index);
    if (cell.id === data.cell_id) cellRun(cell, data, client);
  }
}

/** The cells this page shows running for the kernel (cellRun), until it says they ended. */
const runningHere = new WeakSet();

/**
 * The cell's prompt as the kernel has it, in a page that did not run the cell: `[*]` while
 * its turn runs, then the run's execution count. JupyterLab tells only the page that asked for
 * the run (its kernel connection is `runner`), which follows its own request as before.
 * @param {CellLike} cell
 * @param {Record<string, any>} data
 * @param {string | null} client this page's kernel connection
 */
function cellRun(cell, data, client) {
  if (typeof data.runner === "string" && data.runner && data.runner === client) return;
  codeOutputs(cell);
  if (data.running === true) {
    cell.executionState = "running";
    runningHere.add(cell);
    return;
  }
  if (typeof data.execution_count === "number") cell.executionCount = data.execution_count;
  cell.executionState = "idle";
  runningHere.delete(cell);
}

/**
 * The kernel died or restarted: each cell this page showed running for it (cellRun) will
 * never hear of its end, and shows idle again. How many.
 * @param {NotebookLike | null} model
 */
export function endRuns(model) {
  let ended = 0;
  for (let index = 0; model && index < model.cells.length; index++) {
    const cell = model.cells.get(index);
    if (!runningHere.has(cell)) continue;
    runningHere.delete(cell);
    if (cell.executionState === "running") {
      cell.executionState = "idle";
      ended++;
    }
  }
  return ended;
}

/**
 * The cell's one output becomes the running turn's widget view, unless the cell shows it.
 * @param {CellLike} cell
 * @param {unknown} modelId
 */
function showLive(cell, modelId) {
  if (typeof modelId !== "string" || !modelId) throw new Refused("expected a model_id");
  const outputs = codeOutputs(cell);
  const view = /** @type {any} */ (outputData(/** @type {any} */ (cell), WIDGET_MIME));
  // trusted as trustLive says (before the outputs change: that is no second write)
  if ("trusted" in cell && !cell.trusted) cell.trusted = true;
  // already shown (with what the run printed before it, e.g. a restore's lines): kept
  if (view?.model_id === modelId) return;
  outputs.clear();
  outputs.add({
    output_type: "display_data",
    data: {
      [WIDGET_MIME]: { version_major: 2, version_minor: 1, model_id: modelId },
      "text/plain": "chat conversation (running)",
    },
    metadata: {},
  });
}

/**
 * The cell's one output becomes this finished turn's record, unless the cell holds it already
 * (in its output, or in its metadata after Clear Outputs); the metadata points at it.
 * @param {CellLike} cell
 * @param {unknown} bundle
 */
function showRecord(cell, bundle) {
  const data = /** @type {Record<string, any>} */ (
    bundle && typeof bundle === "object" ? bundle : {}
  );
  const record = data[RECORD_MIME];
  if (!record || typeof record !== "object") throw new Refused("the bundle holds no record");
  const shown = outputData(/** @type {any} */ (cell), RECORD_MIME);
  if (sameTurn(shown, record) || sameTurn(cell.getMetadata?.(KEY), record)) return;
  const outputs = codeOutputs(cell);
  outputs.clear();
  outputs.add({ output_type: "display_data", data, metadata: {} });
  cell.setMetadata?.(KEY, pointerTo(record));
  keepWhenCleared(/** @type {any} */ (cell), record);
}

/**
 * @param {CellLike} cell
 */
function codeOutputs(cell) {
  if (!cell.outputs || cell.type !== "code") throw new Refused("not a code cell");
  return cell.outputs;
}

/**
 * Whether `held` is the finished record of the same turn as `record` (the same conversation,
 * the same events): a page that has it keeps what it shows.
 * @param {unknown} held
 * @param {Record<string, any>} record
 */
function sameTurn(held, record) {
  const saved = /** @type {any} */ (held);
  if (!saved || typeof saved !== "object" || saved.live === true) return false;
  if (!Array.isArray(saved.events) || !Array.isArray(record.events)) return false;
  const last = (/** @type {any[]} */ events) => JSON.stringify(events[events.length - 1] ?? null);
  return (
    saved.conversation_id === record.conversation_id &&
    saved.events.length === record.events.length &&
    last(saved.events) === last(record.events)
  );
}
