/**
 * Page furniture kept up to date with a notebook panel (provenance badges, Ask chat buttons):
 * one redraw per animation frame, after cells come and go, after the signals each cell names
 * fire, and when JupyterLab's windowing draws a cell only now.
 */

/**
 * Call `draw()` once per frame after anything it depends on changed. Each cell's signals are
 * connected once (`cellSignals(cell)`: a cell without any is left alone); `panelSignals` are
 * the panel's own beyond its cells coming and going. Returns the refresh function.
 * @param {any} panel a NotebookPanel
 * @param {{cellSignals: (cell: any) => any[], draw: () => void, panelSignals?: any[]}} how
 */
export function watchPanel(panel, { cellSignals, draw, panelSignals = [] }) {
  const watched = new WeakSet();
  let pending = false;
  const refresh = () => {
    if (pending) return;
    pending = true;
    // after the notebook has made (or dropped) the widgets of what changed
    requestAnimationFrame(() => {
      pending = false;
      if (panel.isDisposed) return;
      for (const cell of panel.content.widgets) {
        if (watched.has(cell)) continue;
        const signals = cellSignals(cell);
        if (!signals.length) continue;
        watched.add(cell);
        for (const signal of [...signals, cell.inViewportChanged]) signal?.connect(refresh);
      }
      draw();
    });
  };
  panel.context.ready.then(() => {
    panel.content.model?.cells.changed.connect(refresh);
    panel.content.modelChanged?.connect(refresh);
    for (const signal of panelSignals) signal?.connect(refresh);
    refresh();
  });
  return refresh;
}
