import assert from "node:assert/strict";
import { test } from "node:test";

/**
 * A tool call's draft card (live/draft.js, render/toolcard.js's ToolInputView): the arguments
 * grow as the kernel's `delta` messages bring them, as text only, and the call's real card
 * replaces the draft card once the kernel released it and the transcript drew the event.
 *
 * The DOM is test/fakedom.js, which refuses HTML parsing, so a test fails if model text ever
 * reaches a parser.
 */
import { created, install } from "./fakedom.js";

install();

const { Draft } = await import("../src/live/draft.js");
const { parseMode } = await import("../src/render/reasoning.js");

const stats = /** @type {any} */ ({ add() {} });
const newDraft = () => new Draft(stats, parseMode(undefined));

/** The draft's tool cards: [name line, arguments text, the arguments' <pre>]. */
function cards(draft) {
  return draft.el.find("jt-tool-draft").map((card) => ({
    head: card.find("jt-tool-head")[0].textContent,
    args: card.find("jt-tool-args-draft")[0],
    callId: card.getAttribute("data-draft-call-id"),
  }));
}

const HOSTILE = '{"html": "<img src=x onerror=alert(1)>", "n": 1}';

test("a tool call's arguments grow in a draft card, appended as text, never parsed", () => {
  const draft = newDraft();
  const pieces = [HOSTILE.slice(0, 12), HOSTILE.slice(12, 30), HOSTILE.slice(30)];
  draft.apply({ type: "delta", parts: [[0, "tool_input", "", "render_html", "call_1"]] });
  draft.render();
  let [card] = cards(draft);
  assert.equal(card.head, "⚙ render_html— preparing arguments…");
  assert.equal(card.callId, "call_1");
  assert.equal(card.args.textContent, "");
  const textNode = card.args.firstChild;

  let shown = "";
  for (const piece of pieces) {
    draft.apply({ type: "delta", parts: [[0, "tool_input", piece, "render_html", "call_1"]] });
    shown += piece;
    assert.equal(cards(draft)[0].args.textContent, shown.slice(0, -piece.length)); // next frame
    draft.render();
    [card] = cards(draft);
    assert.equal(card.args.textContent, shown);
    // the same text node grew: the card was not drawn again
    assert.equal(card.args.childNodes.length, 1);
    assert.equal(card.args.firstChild, textNode);
  }
  assert.equal(textNode.data, HOSTILE);
  assert.ok(!created.includes("img"), "no element was made from the arguments");
  assert.equal(cards(draft).length, 1);
});

test("the call's card replaces the draft card once the kernel released it", () => {
  const draft = newDraft();
  draft.apply({
    type: "delta",
    parts: [
      [1, "tool_input", '{"q": "x"}', "lookup", "call_2"],
      [2, "tool_input", '{"q": ', "lookup", "call_3"],
    ],
  });
  draft.render();
  assert.deepEqual(
    cards(draft).map((card) => card.callId),
    ["call_2", "call_3"],
  );

  draft.apply({ type: "released", blocks: [[1, "event-call-2"]] });
  draft.render();
  // handed over, not yet drawn: the draft card stays where it was, its text kept
  assert.equal(cards(draft).length, 2);
  assert.equal(cards(draft)[0].args.textContent, '{"q": "x"}');
  assert.equal(draft.adopt("event-call-2", "tool_call_request"), null); // a card is drawn anew

  draft.forget((eventId) => eventId === "event-call-2"); // the transcript drew the call's card
  draft.render();
  assert.deepEqual(
    cards(draft).map((card) => card.callId),
    ["call_3"], // the next call goes on streaming
  );
  draft.apply({ type: "released", blocks: [[2, null]] });
  draft.render();
  assert.equal(cards(draft).length, 0);
  assert.equal(draft.active, false);
});

test("a call stopped mid-arguments is dropped with its draft card", () => {
  const draft = newDraft();
  draft.apply({ type: "delta", parts: [[0, "tool_input", '{"q": "x', "lookup", "call_5"]] });
  draft.render();
  draft.apply({ type: "released", blocks: [[0, null]] });
  draft.render();
  assert.equal(cards(draft).length, 0);
  assert.equal(draft.active, false);
});

test("a view that rendered late gets the whole draft: the card's arguments go on growing", () => {
  const draft = newDraft();
  draft.apply({ type: "draft", blocks: [[0, "tool_input", '{"a": ', "add", "call_4"]] });
  draft.render();
  const [card] = cards(draft);
  assert.equal(card.head, "⚙ add— preparing arguments…");
  // a second view's `ready` resends the draft to every view: only the new text is added
  draft.apply({ type: "draft", blocks: [[0, "tool_input", '{"a": 2, "b"', "add", "call_4"]] });
  draft.render();
  assert.equal(cards(draft)[0].args, card.args);
  assert.equal(card.args.textContent, '{"a": 2, "b"');
});
