import assert from "node:assert/strict";
import { test } from "node:test";

/**
 * A streamed block is handed to its event (live/draft.js `adopt`) only when it shows exactly
 * the event's text. The kernel redacts an answer whole where it becomes an event, and its draft
 * as it streams: should the two ever differ, the page draws the event from its own text (what
 * is saved), never keeps what streamed.
 */
import { install } from "./fakedom.js";

install();

const { Draft } = await import("../src/live/draft.js");
const { parseMode } = await import("../src/render/reasoning.js");

function counting() {
  const counts = {};
  return { counts, add: (name, by = 1) => (counts[name] = (counts[name] ?? 0) + by) };
}

test("a block is adopted by its event when the texts are equal, redrawn when they differ", () => {
  const stats = counting();
  const draft = new Draft(/** @type {any} */ (stats), parseMode(undefined));
  draft.apply({
    type: "delta",
    parts: [
      [0, "message", "The key is "],
      [1, "reasoning", "thinking"],
    ],
  });
  draft.apply({ type: "delta", parts: [[0, "message", "sk-ant-api03-abcdefgh"]] });
  draft.apply({
    type: "released",
    blocks: [
      [0, "ev-0"],
      [1, "ev-1"],
    ],
  });

  // the event says otherwise (it was redacted): the streamed DOM is not kept
  assert.equal(draft.adopt("ev-0", "message", "The key is [redacted: API key]"), null);
  assert.equal(draft.handed.has("ev-0"), false, "let go: the event is drawn from its text");
  assert.equal(stats.counts.redrawn, 1);

  const view = draft.adopt("ev-1", "reasoning", "thinking");
  assert.ok(view, "the same text: its DOM is kept");
  assert.equal(view.text(), "thinking");
  assert.equal(stats.counts.adopted, 1);
});
