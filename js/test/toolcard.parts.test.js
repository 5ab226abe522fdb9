import assert from "node:assert/strict";
import { test } from "node:test";

/**
 * A tool card makes the parts a finished call rarely has (output lines, a sub-agent's
 * transcript, questions, the prompt slot, "edited by") only when it needs them: a notebook of
 * saved cards has thousands of them, each laid out as its cell scrolls into view (B11). What a
 * person sees is the same: the parts that are made stand where they always stood.
 */
import { install } from "./fakedom.js";

install();

const { ToolCard } = await import("../src/render/toolcard.js");
const { ProgressLog } = await import("../src/util/progress.js");

const request = (args = { name: "df0" }) => ({
  id: "e1",
  kind: "tool_call_request",
  call_id: "c1",
  name: "describe",
  arguments: args,
});
const response = (extra = {}) => ({
  id: "e2",
  kind: "tool_call_response",
  call_id: "c1",
  content: "DataFrame 8,760×4",
  status: "done",
  decisions: [{ action: "approved", by: "policy" }],
  ...extra,
});
const state = (extra = {}) => ({
  request: request(),
  response: response(),
  live: null,
  output: null,
  inquiries: [],
  undo: null,
  ...extra,
});

/** The card's own parts, by their classes, in order. */
const parts = (card) => card.el.childNodes.map((el) => el.className);

test("a finished call's card holds its header, arguments, decisions and result only", () => {
  const card = new ToolCard("c1");
  card.update(state());
  assert.deepEqual(parts(card), ["jt-tool-head", "jt-tool-args", "jt-decisions", "jt-tool-result"]);
  assert.equal(card.el.find("jt-edited").length, 0);
  assert.match(card.el.textContent, /describe.*done/);
  assert.match(card.el.find("jt-decisions")[0].textContent, /approved by policy/);
  assert.match(card.el.find("jt-tool-result")[0].textContent, /DataFrame 8,760×4/);
});

test("the parts a call needs are made in their places, and show what they hold", () => {
  const card = new ToolCard("c1");
  const output = new ProgressLog();
  output.mergeLive({ status: "running", progress: ["step 1"] });
  const inquiry = {
    request: { id: "q1", kind: "inquiry_request", inquiry_id: "i1", question: "Which year?" },
    response: null,
  };
  card.update(state({ response: null, output, inquiries: [inquiry] }));
  const slot = card.promptSlot;
  assert.deepEqual(parts(card), [
    "jt-tool-head",
    "jt-tool-args",
    "jt-progress",
    "jt-inquiries",
    "jt-prompt-slot",
    "jt-decisions",
    "jt-tool-result",
  ]);
  assert.equal(card.promptSlot, slot, "made once");
  assert.equal(card.el.find("jt-progress")[0].textContent, "step 1\n");
  assert.match(card.el.find("jt-inquiries")[0].textContent, /\? Which year\? → waiting/);
  // a sub-agent's usage makes its fold, before the questions
  card.update(state({ response: response({ subagent: { cycles: 2 } }) }));
  assert.equal(card.el.childNodes[3].className, "jt-fold jt-nested");
  assert.equal(card.el.childNodes[3].hidden, false);
});

test("an edited call's header says who edited its arguments, before the badge", () => {
  const card = new ToolCard("c1");
  const edit = { action: "edited", by: "user", detail: '{"name": "df1"}', who: null };
  card.update(state({ response: response({ decisions: [edit] }) }));
  const head = card.el.find("jt-tool-head")[0];
  const edited = head.find("jt-edited")[0];
  assert.equal(edited.textContent, "edited by you");
  assert.equal(edited.hidden, false);
  assert.equal(edited.nextSibling, card.badge);
});

test("a terminal agent's call (%chat serve) says which client asked, in the card's head", () => {
  const card = new ToolCard("c1");
  card.renderRequest({ ...request(), metadata: { client: "Claude Code", call: 7 } });
  const asker = card.head.find("jt-tool-asker")[0];
  assert.equal(asker.hidden, false);
  assert.equal(asker.textContent, "Claude Code · call 7");
  const model = new ToolCard("c2");
  model.renderRequest(request()); // a model's call: nothing more in the head
  assert.equal(model.head.find("jt-tool-asker")[0].hidden, true);
});

test("an error result is never drawn as done, whatever status its record says (issue 45)", () => {
  // a python run whose code raised, as an older version saved it: status "done"
  const raised = response({ content: "NameError: name 'df' is not defined", is_error: true });
  for (const saved of [raised, { ...raised, status: "error" }, { ...raised, status: undefined }]) {
    const card = new ToolCard("c1");
    card.update(state({ response: saved }));
    assert.equal(card.el.dataset.status, "error");
    assert.equal(card.badge.textContent, "error");
    assert.match(card.el.find("jt-tool-result")[0].textContent, /Error/);
  }
  const skipped = new ToolCard("c1");
  skipped.update(state({ response: response({ is_error: true, status: "skipped" }) }));
  assert.equal(skipped.el.dataset.status, "skipped"); // a call not run keeps its own word
});
