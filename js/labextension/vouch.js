/**
 * A running turn's widget, drawn in a page that did not run its cell (real-time collaboration).
 *
 * The widget view renders only in a trusted output, and in a shared document an output another
 * page wrote is untrusted here: the page would show only its text ("chat conversation
 * (running)"). Before it displays a turn's widget the kernel vouches for it, `trust_live
 * {cell_id, model_id}` (and `show_live` where a page writes it for a reloaded one). While the
 * cell is empty, edit.js trustLive trusts the cell; but the other page's output may arrive
 * through the shared document first (or the previous run's outputs still be there), and trusting
 * a cell that holds outputs rewrites them, a second write racing the running page. So this page
 * remembers the vouch and draws the vouched view itself, in this page only, without writing the
 * notebook: the one untrusted output whose widget view has that model id, nothing else. A
 * notebook's saved widget-view output that no kernel vouched for stays text. When that output
 * changes later (the record replaces the widget), the output area draws it again itself.
 * No Jupyter imports: the cells and output areas are JupyterLab's, duck-typed.
 */
import { WIDGET_MIME } from "./constants.js";

/**
 * The vouch a kernel request makes, or null: the cell and the widget model it names.
 * @param {unknown} data a message on the metadata comm
 * @returns {{cellId: string, modelId: string} | null}
 */
export function vouchOf(data) {
  const request = /** @type {Record<string, unknown>} */ (
    data && typeof data === "object" ? data : {}
  );
  const { request: kind, cell_id: cellId, model_id: modelId } = request;
  if (kind !== "trust_live" && kind !== "show_live") return null;
  if (typeof cellId !== "string" || typeof modelId !== "string" || !cellId || !modelId) return null;
  return { cellId, modelId };
}

/**
 * The indices of the outputs this page draws for the vouch: untrusted, holding the widget view
 * of `modelId`.
 * @param {{length: number, get(i: number): {trusted?: boolean, data?: Record<string, any>}}} outputs
 * @param {string} modelId
 * @returns {number[]}
 */
export function vouchedOutputs(outputs, modelId) {
  const found = [];
  for (let i = 0; i < outputs.length; i++) {
    const output = outputs.get(i);
    if (!output.trusted && output.data?.[WIDGET_MIME]?.model_id === modelId) found.push(i);
  }
  return found;
}

/**
 * This page's vouches for one notebook document: give it each message on the metadata comm.
 * `cellsOf(cellId)` is the page's cell widgets of that cell (one per view of the notebook).
 * Each vouched cell's output area is watched (once) for the view arriving later or being drawn
 * again.
 * @param {(cellId: string) => any[]} cellsOf
 * @returns {(data: unknown) => void}
 */
export function vouches(cellsOf) {
  /** @type {Map<string, string>} cell id -> the model id vouched for last */
  const vouched = new Map();
  const watched = new WeakSet();
  const drawn = new WeakSet(); // the renderers this module made
  /** @param {any} cell */
  const draw = (cell) => {
    const modelId = vouched.get(cell.model?.id);
    if (modelId && !cell.isDisposed) drawVouched(cell.outputArea, modelId, drawn);
  };
  return (data) => {
    const vouch = vouchOf(data);
    if (!vouch) return;
    vouched.set(vouch.cellId, vouch.modelId);
    for (const cell of cellsOf(vouch.cellId)) {
      const model = cell.outputArea?.model;
      if (!model) continue;
      if (!watched.has(model)) {
        watched.add(model);
        // after the output area has drawn the change (its handlers run first, synchronously)
        const later = () => void Promise.resolve().then(() => draw(cell));
        model.changed.connect(later);
        model.stateChanged?.connect(later);
      }
      draw(cell);
    }
  };
}

/**
 * Draw each vouched widget view of an output area with the widget renderer, in place of the
 * renderer the output area chose for an untrusted output (its text). The renderer comes from
 * the area's own rendermime, where the widget manager of this notebook registered it.
 * @param {any} area an OutputArea
 * @param {string} modelId
 * @param {WeakSet<object>} drawn
 */
function drawVouched(area, modelId, drawn) {
  if (!area || area.isDisposed || !area.rendermime?.mimeTypes?.includes(WIDGET_MIME)) return;
  for (const i of vouchedOutputs(area.model, modelId)) {
    const panel = area.widgets[i];
    const shown = panel?.widgets?.filter((/** @type {any} */ w) => "renderModel" in w).pop();
    if (!shown || drawn.has(shown)) continue;
    const output = area.model.get(i);
    const renderer = area.rendermime.createRenderer(WIDGET_MIME);
    drawn.add(renderer);
    renderer.addClass("jp-OutputArea-output");
    shown.dispose();
    panel.addWidget(renderer);
    const data = JSON.parse(JSON.stringify(output.data)); // the renderer may write to it
    const model = { data, metadata: output.metadata ?? {}, trusted: true, setData() {} };
    renderer.renderModel(model).catch(() => {}); // a view that fails shows its own error
  }
}
