import assert from "node:assert/strict";
import { test } from "node:test";
import { askSource, speaksPython } from "../labextension/errors.js";

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
  assert.equal(askSource(3), "%%chat --fix 3\nWhy does cell [3] fail, and how do I fix it?");
});
