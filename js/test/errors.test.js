import assert from "node:assert/strict";
import { test } from "node:test";
import { askSource, shownCount, speaksPython } from "../labextension/errors.js";

/** A NotebookModel's metadata, as getMetadata reads it. */
function model(metadata) {
  return { getMetadata: (key) => metadata[key] };
}

test("Ask chat shows in Python notebooks, and where the language is not known yet", () => {
  assert.equal(speaksPython(model({ language_info: { name: "python" } })), true);
  assert.equal(speaksPython(model({ kernelspec: { language: "Python" } })), true);
  assert.equal(speaksPython(model({})), true);
  assert.equal(speaksPython(null), true);
});

test("Ask chat does not show where the kernel has no %%chat (R, Julia)", () => {
  assert.equal(speaksPython(model({ language_info: { name: "R" } })), false);
  // the kernel's own language_info wins over the kernelspec the file was saved with
  const switched = { language_info: { name: "julia" }, kernelspec: { language: "python" } };
  assert.equal(speaksPython(model(switched)), false);
});

test("the chat cell a click adds reads as a person would write it", () => {
  assert.equal(askSource(19), "%%chat --fix 19\nWhy does cell [19] fail, and how do I fix it?");
  assert.equal(
    askSource(null),
    "%%chat --fix above\nWhy does the cell above fail, and how do I fix it?",
  );
});

test("a failing cell is named by the count Jupyter shows beside it, never by its index", () => {
  /** @param {number | null} count */
  const cell = (count, type = "code") => ({ model: { type, executionCount: count } });
  const failing = cell(19);
  const notebook = { widgets: [cell(null, "markdown"), cell(4), failing, cell(null)] };
  assert.equal(shownCount(notebook, failing), 19); // the 3rd cell, index 2: [19]
  // no count, or one another cell shows too (a restarted kernel counts again): the cell above
  assert.equal(shownCount(notebook, cell(null)), null);
  const twice = cell(4);
  assert.equal(shownCount({ widgets: [cell(4), twice] }, twice), null);
});
