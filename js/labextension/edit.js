/**
 * Change the notebook's cells for the kernel (`jupyter_turns/editing/page.py`): requests on the
 * `jupyter_turns.metadata` comm, each answered `{request_id, ok: true, ...}` or
 * `{request_id, ok: false, reason}`. No Jupyter imports: runs (and is tested) anywhere.
 *
 *   {request: "insert_cell", after, cell_type, source}   -> {cell_id, index}  below cell `after`
 *   {request: "set_source", cell_id, source, expected}   -> {index}
 *   {request: "delete_cell", cell_id, expected}          -> {}
 *   {request: "set_outputs", cell_id, outputs, execution_count} -> {}
 *   {request: "replace_record", cell_id, bundle}          -> {}  the chat record the cell shows
 *   {request: "show_live", cell_id, model_id}             -> {}  the running turn's widget
 *   {request: "show_record", cell_id, bundle}             -> {}  a finished turn's record
 *
 * The last two reach a page opened during or after a turn (reloaded, a second tab, reconnected:
 * `jupyter_turns/kernel/front.py` page_opened), whose file never held what the kernel did since:
 * the cell's outputs become the widget, or the record (unless the cell already holds that
 * record), with the metadata pointing at it so that saving keeps it.
 *
 * A change that replaces or removes text names the text it `expected`; a cell holding anything
 * else (the user typed meanwhile) is refused, never overwritten.
 */
import {
  METADATA_KEY as KEY,
  MISSING_REQUEST_ID,
  NOTEBOOK_CLOSED,
  RECORD_MIME,
  WIDGET_MIME,
} from "./constants.js";
import { keepWhenCleared, outputData, pointerTo } from "./turns.js";

/**
 * @typedef {{id: string, type?: string, sharedModel: {getSource(): string,
 *            setSource(s: string): void},
 *            outputs?: {length: number, get(i: number): {data?: Record<string, unknown>},
 *                       set(i: number, o: object): void, clear(): void, add(o: object): void},
 *            executionCount?: number | null, trusted?: boolean, getMetadata?(k: string): unknown,
 *            setMetadata?(k: string, v: unknown): void}} CellLike
 * @typedef {{cells: {length: number, get(i: number): CellLike},
 *            sharedModel: {insertCell(i: number, cell: object): unknown,
 *                          deleteCell(i: number): void}}} NotebookLike
 */

export const EDIT_REQUESTS = [
  "insert_cell",
  "set_source",
  "delete_cell",
  "set_outputs",
  "replace_record",
  "show_live",
  "show_record",
];

/**
 * Answer one edit request.
 * @param {NotebookLike | null} model
 * @param {Record<string, any>} data
 */
export function answerEdit(model, data) {
  const requestId = typeof data.request_id === "string" ? data.request_id : null;
  try {
    if (requestId === null) throw new Refused(MISSING_REQUEST_ID);
    if (!model) throw new Refused(NOTEBOOK_CLOSED);
    return { request_id: requestId, ok: true, ...apply(model, data) };
  } catch (err) {
    const reason = err instanceof Refused ? err.message : `failed: ${String(err)}`;
    return { request_id: requestId, ok: false, reason };
  }
}

class Refused extends Error {}

/**
 * @param {NotebookLike} model
 * @param {Record<string, any>} data
 * @returns {object}
 */
function apply(model, data) {
  switch (data.request) {
    case "insert_cell": {
      const after = find(model, data.after);
      const index = after.index + 1;
      const type = data.cell_type === "markdown" ? "markdown" : "code";
      insertCell(model, index, { cell_type: type, source: text(data.source) });
      return { cell_id: model.cells.get(index).id, index };
    }
    case "set_source": {
      const { cell, index } = find(model, data.cell_id);
      expect(cell, data.expected);
      cell.sharedModel.setSource(text(data.source));
      return { index };
    }
    case "delete_cell": {
      const { cell, index } = find(model, data.cell_id);
      expect(cell, data.expected);
      model.sharedModel.deleteCell(index);
      return {};
    }
    case "set_outputs": {
      const { cell } = find(model, data.cell_id);
      if (!cell.outputs || cell.type !== "code") throw new Refused("not a code cell");
      cell.outputs.clear();
      for (const output of Array.isArray(data.outputs) ? data.outputs : [])
        cell.outputs.add(output);
      if (typeof data.execution_count === "number") cell.executionCount = data.execution_count;
      return {};
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
    default:
      throw new Refused(`unknown request: ${String(data.request)}`);
  }
}

/**
 * Insert a cell (a code cell with its outputs, when given) at `index`.
 * @param {NotebookLike} model
 * @param {number} index
 * @param {{cell_type: string, source: string, outputs?: object[]}} cell
 */
export function insertCell(model, index, cell) {
  const code = cell.cell_type === "code";
  model.sharedModel.insertCell(index, {
    cell_type: cell.cell_type,
    source: cell.source,
    metadata: {},
    ...(code ? { outputs: cell.outputs ?? [], execution_count: null } : {}),
  });
}

/**
 * The cell with this id and its index.
 * @param {NotebookLike} model
 * @param {unknown} cellId
 */
export function find(model, cellId) {
  for (let index = 0; index < model.cells.length; index++) {
    const cell = model.cells.get(index);
    if (cell.id === cellId) return { cell, index };
  }
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
 * conversation, else the metadata (after Clear Outputs it holds the record).
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
    if (held?.conversation_id === record.conversation_id) {
      outputs.set(j, { output_type: "display_data", data, metadata: {} });
      keepWhenCleared(/** @type {any} */ (cell), record);
      return;
    }
  }
  const saved = /** @type {any} */ (cell.getMetadata?.(KEY));
  if (Array.isArray(saved?.events) && saved.conversation_id === record.conversation_id) {
    cell.setMetadata?.(KEY, record);
    return;
  }
  throw new Refused("the cell no longer shows that conversation");
}

/**
 * A `show_live` request in a page that does not change the shared document (another page of
 * it does, shared.js): the cell is trusted here all the same, so that the widget view the
 * other page writes renders in this one too. The kernel running this cell sent it, as it sends
 * a run's outputs: trusted alike (the widget view renders only in a trusted output). Trust is
 * this page's own state; set before the view arrives, it changes nothing in the document.
 * @param {NotebookLike | null} model
 * @param {Record<string, any>} data
 */
export function trustLive(model, data) {
  if (data.request !== "show_live" || !model) return;
  for (let index = 0; index < model.cells.length; index++) {
    const cell = model.cells.get(index);
    if (cell.id === data.cell_id && "trusted" in cell && !cell.trusted) cell.trusted = true;
  }
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
