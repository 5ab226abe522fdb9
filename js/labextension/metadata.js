/**
 * Apply one `jupyter_turns.metadata` request to a notebook model — no Jupyter imports, so it
 * runs (and is tested) anywhere.
 */
import { NOTEBOOK_CLOSED } from "./constants.js";
import { keepWhenCleared, outputData, pointerTo } from "./turns.js";

/**
 * @typedef {{cell_id?: string | null, scope?: string, key?: unknown, value?: unknown,
 *            delete?: boolean, in_output?: string}} MetadataRequest
 *   `in_output`: the cell's output of that mime type holds the record (the kernel just sent
 *   it there): the metadata keeps a pointer to it, and the record itself if the output is
 *   cleared (turns.js keepWhenCleared)
 * @typedef {{ok: true} | {ok: false, reason: string}} MetadataReply
 * @typedef {{ id: string, setMetadata(key: string, value: unknown): void,
 *             deleteMetadata(key: string): void,
 *             outputs?: {length: number, get(i: number): {data: Record<string, unknown>}} }}
 *   MetadataTarget
 * @typedef {MetadataTarget & { cells: { length: number, get(i: number): MetadataTarget } }}
 *   NotebookModelLike
 */

/**
 * Apply one request to a notebook model.
 * @param {NotebookModelLike | null} model
 * @param {unknown} data
 * @returns {MetadataReply}
 */
export function applyMetadata(model, data) {
  if (!model) {
    return { ok: false, reason: NOTEBOOK_CLOSED };
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return { ok: false, reason: "expected an object {cell_id, key, value}" };
  }
  const request = /** @type {MetadataRequest} */ (data);
  if (typeof request.key !== "string" || request.key === "") {
    return { ok: false, reason: "missing metadata key" };
  }
  /** @type {MetadataTarget | null} */
  let target = null;
  if (request.cell_id === null || request.cell_id === undefined) {
    if (request.scope !== "notebook") {
      return { ok: false, reason: "cell_id is null but scope is not 'notebook'" };
    }
    target = model;
  } else {
    target = findCell(model, String(request.cell_id));
    if (!target) {
      return { ok: false, reason: `no cell with id ${request.cell_id} in this notebook` };
    }
  }
  let value = request.value;
  if (typeof request.in_output === "string") {
    const record = outputData(/** @type {any} */ (target), request.in_output);
    if (!record || typeof record !== "object") {
      return { ok: false, reason: `the cell has no ${request.in_output} output` };
    }
    value = pointerTo(/** @type {Record<string, any>} */ (record));
    keepWhenCleared(/** @type {any} */ (target), /** @type {Record<string, any>} */ (record));
  }
  if (request.delete === true) {
    target.deleteMetadata(request.key);
  } else {
    target.setMetadata(request.key, value);
  }
  return { ok: true };
}

/**
 * @param {NotebookModelLike} model
 * @param {string} cellId
 */
function findCell(model, cellId) {
  const cells = model.cells;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.id === cellId) {
      return cell;
    }
  }
  return null;
}
