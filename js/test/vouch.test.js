import assert from "node:assert/strict";
import { test } from "node:test";
import { WIDGET_MIME } from "../labextension/constants.js";
import { vouchOf, vouchedOutputs, vouches } from "../labextension/vouch.js";

const view = (modelId) => ({ [WIDGET_MIME]: { model_id: modelId }, "text/plain": "chat" });

/** A Lumino-like signal. */
function signal() {
  const slots = [];
  return { connect: (fn) => slots.push(fn), emit: () => slots.forEach((fn) => fn()), slots };
}

/** A widget: disposable, with classes. */
function widget(kind) {
  return {
    kind,
    isDisposed: false,
    classes: [],
    dispose() {
      this.isDisposed = true;
    },
    addClass(name) {
      this.classes.push(name);
    },
  };
}

/** A code cell's widget with an output area drawing each output as the text renderer would. */
function cellWidget(id, outputs, mimeTypes = [WIDGET_MIME, "text/plain"]) {
  const model = { list: outputs, changed: signal(), stateChanged: signal() };
  model.get = (i) => model.list[i];
  Object.defineProperty(model, "length", { get: () => model.list.length });
  const area = {
    model,
    widgets: [],
    rendered: [],
    rendermime: {
      mimeTypes,
      createRenderer: (mime) => {
        const renderer = { ...widget(mime), renderModel: async (m) => area.rendered.push(m) };
        return renderer;
      },
    },
    draw() {
      // what OutputArea does on a change: a panel per output, prompt then its renderer
      area.widgets = model.list.map(() => {
        const panel = { widgets: [{ kind: "prompt" }, { ...widget("text"), renderModel() {} }] };
        panel.addWidget = (w) => panel.widgets.push(w);
        return panel;
      });
    },
  };
  area.draw();
  return { model: { id }, outputArea: area, isDisposed: false };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const shown = (cell) => cell.outputArea.widgets.map((p) => p.widgets.at(-1).kind);

test("a vouch is a trust_live or show_live naming a cell and a widget model", () => {
  const vouch = { cellId: "c", modelId: "m" };
  assert.deepEqual(vouchOf({ request: "trust_live", cell_id: "c", model_id: "m" }), vouch);
  assert.deepEqual(vouchOf({ request: "show_live", cell_id: "c", model_id: "m" }), vouch);
  assert.equal(vouchOf({ request: "trust_live", cell_id: "c" }), null); // an older kernel
  assert.equal(vouchOf({ request: "show_record", cell_id: "c", model_id: "m" }), null);
  assert.equal(vouchOf({ key: "jupyter_turns", cell_id: "c", model_id: "m" }), null);
  assert.equal(vouchOf(null), null);
});

test("only untrusted outputs holding the vouched widget view are drawn by the page", () => {
  const list = [
    { trusted: false, data: { "text/plain": "printed" } },
    { trusted: false, data: view("other") },
    { trusted: true, data: view("m") }, // drawn by the output area already
    { trusted: false, data: view("m") },
  ];
  assert.deepEqual(vouchedOutputs({ length: list.length, get: (i) => list[i] }, "m"), [3]);
});

test("the vouched view is drawn whichever comes first, the output or the vouch", async () => {
  const early = cellWidget("a", [{ trusted: false, data: view("m1") }]);
  const late = cellWidget("b", []);
  const forged = cellWidget("c", [{ trusted: false, data: view("m9") }]);
  const cells = [early, late, forged];
  const vouch = vouches((id) => cells.filter((c) => c.model.id === id));

  vouch({ request: "trust_live", cell_id: "a", model_id: "m1" }); // the output came first
  assert.deepEqual(shown(early), [WIDGET_MIME]);
  const [model] = early.outputArea.rendered;
  assert.equal(model.trusted, true); // in this page only: the notebook's output stays as it is
  assert.equal(early.outputArea.model.list[0].trusted, false);
  assert.equal(early.outputArea.widgets[0].widgets.at(-1).classes[0], "jp-OutputArea-output");

  vouch({ request: "trust_live", cell_id: "b", model_id: "m2" }); // the vouch came first
  late.outputArea.model.list.push({ trusted: false, data: view("m2") });
  late.outputArea.draw();
  late.outputArea.model.changed.emit();
  await tick();
  assert.deepEqual(shown(late), [WIDGET_MIME]);
  late.outputArea.model.stateChanged.emit(); // nothing redrawn: not drawn twice
  await tick();
  assert.equal(late.outputArea.rendered.length, 1);
  late.outputArea.draw(); // the output area drew it again as text (its data changed)
  late.outputArea.model.stateChanged.emit();
  await tick();
  assert.deepEqual(shown(late), [WIDGET_MIME]);

  // a widget view in a notebook, vouched for by no kernel (nor for another model): text
  vouch({ request: "trust_live", cell_id: "c", model_id: "m1" });
  assert.deepEqual(shown(forged), ["text"]);
  // another vouch does not add a second listener to an output area watched already
  vouch({ request: "show_live", cell_id: "a", model_id: "m1" });
  assert.equal(early.outputArea.model.changed.slots.length, 1);
});

test("a notebook without the widget renderer draws nothing itself", () => {
  const cell = cellWidget("a", [{ trusted: false, data: view("m") }], ["text/plain"]);
  vouches(() => [cell])({ request: "trust_live", cell_id: "a", model_id: "m" });
  assert.deepEqual(shown(cell), ["text"]);
});
