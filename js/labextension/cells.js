/**
 * Answer a `{request: "cells", request_id}` message on the `jupyter_turns.metadata` comm: the
 * notebook's cells as the live model holds them (unsaved edits included), so the kernel can
 * read the notebook it runs in. No Jupyter imports: runs (and is tested) anywhere.
 *
 * Each cell is `{id, cell_type, source, execution_count, outputs}`, and `provenance`, the stamp
 * of a cell the model changed (provenance.js), when it has one; other cell metadata and
 * attachments are not sent. A chat record or a widget in an output is large and means nothing
 * outside the page: it is replaced by its one-line text, marked `jupyter_turns: true`.
 */
import {
  METADATA_KEY,
  MISSING_REQUEST_ID,
  NOTEBOOK_CLOSED,
  RECORD_MIME,
  WIDGET_MIME,
} from "./constants.js";

/**
 * @typedef {{request?: unknown, request_id?: unknown}} CellsRequest
 * @typedef {{id: string | null, cell_type: string, source: string,
 *            execution_count: number | null, outputs: object[], provenance?: object}} CellJson
 * @typedef {{request_id: string | null, ok: true, cells: CellJson[], path: string | null,
 *            dirty: boolean}
 *         | {request_id: string | null, ok: false, reason: string}} CellsReply
 * @typedef {{id?: string, toJSON(): Record<string, any>}} CellModelLike
 * @typedef {{cells: {length: number, get(i: number): CellModelLike}, dirty?: boolean}}
 *   NotebookModelLike
 */

/** Output types that carry mime `data`. */
const DATA_OUTPUTS = ["display_data", "execute_result", "update_display_data"];
/** Mime types whose outputs are replaced by their text. */
const REPLACED = [RECORD_MIME, WIDGET_MIME];

/**
 * Is this comm message a request (answered here) rather than a metadata write?
 * @param {unknown} data
 */
export function isRequest(data) {
  return typeof data === "object" && data !== null && !Array.isArray(data) && "request" in data;
}

/**
 * Answer one request.
 * @param {NotebookModelLike | null} model
 * @param {unknown} data
 * @param {() => string | null} [getPath] the notebook's path, if known
 * @returns {CellsReply}
 */
export function answerRequest(model, data, getPath = () => null) {
  const request = /** @type {CellsRequest} */ (isRequest(data) ? data : {});
  const requestId = typeof request.request_id === "string" ? request.request_id : null;
  /** @param {string} reason */
  const refuse = (reason) => ({ request_id: requestId, ok: /** @type {false} */ (false), reason });
  if (requestId === null) return refuse(MISSING_REQUEST_ID);
  if (request.request !== "cells") return refuse(`unknown request: ${String(request.request)}`);
  if (!model) return refuse(NOTEBOOK_CLOSED);
  try {
    const path = getPath();
    return {
      request_id: requestId,
      ok: true,
      cells: notebookCells(model),
      path: typeof path === "string" ? path : null,
      dirty: model.dirty === true,
    };
  } catch (err) {
    return refuse(`failed to read the cells: ${String(err)}`);
  }
}

/**
 * Every cell of the model, in order.
 * @param {NotebookModelLike} model
 * @returns {CellJson[]}
 */
export function notebookCells(model) {
  const cells = [];
  for (let i = 0; i < model.cells.length; i++) cells.push(cellJson(model.cells.get(i)));
  return cells;
}

/**
 * @param {CellModelLike} cell
 * @returns {CellJson}
 */
export function cellJson(cell) {
  const json = cell.toJSON();
  const code = json.cell_type === "code";
  const id = json.id ?? cell.id;
  const stamp = json.metadata?.[METADATA_KEY]?.provenance;
  return {
    id: typeof id === "string" ? id : null,
    cell_type: String(json.cell_type ?? "code"),
    source: joinText(json.source),
    execution_count: code && typeof json.execution_count === "number" ? json.execution_count : null,
    outputs: code && Array.isArray(json.outputs) ? json.outputs.map(outputJson) : [],
    ...(stamp && typeof stamp === "object" && !Array.isArray(stamp) ? { provenance: stamp } : {}),
  };
}

/**
 * An output as saved, unless it holds a chat record or a widget: then its text only.
 * @param {Record<string, any>} output
 * @returns {object}
 */
export function outputJson(output) {
  const data = output?.data;
  const replaced =
    DATA_OUTPUTS.includes(output?.output_type) &&
    data &&
    typeof data === "object" &&
    REPLACED.some((mime) => mime in data);
  if (!replaced) return output;
  const text = joinText(data["text/plain"]);
  return {
    output_type: output.output_type,
    ...(output.output_type === "execute_result"
      ? { execution_count: output.execution_count ?? null }
      : {}),
    data: { "text/plain": text || "chat conversation" },
    metadata: {},
    jupyter_turns: true,
  };
}

/**
 * nbformat text: a string, or a list of lines to join.
 * @param {unknown} text
 */
function joinText(text) {
  if (Array.isArray(text)) return text.map(String).join("");
  return typeof text === "string" ? text : "";
}
