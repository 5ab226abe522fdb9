import assert from "node:assert/strict";
import { test } from "node:test";
import { stateLabel } from "../src/render/status.js";
import { decisionChips, ranArguments } from "../src/render/toolcard.js";

/** What the status line and a finished tool card say: the truth about who waits and who chose. */

test("a prompt waiting for a click says so, not 'Running tools…'", () => {
  assert.equal(stateLabel("executing"), "Running tools…");
  assert.equal(stateLabel("executing", "approval"), "Waiting for your approval");
  assert.equal(stateLabel("executing", "inquiry"), "Waiting for your answer");
  assert.equal(stateLabel("complete", "approval"), ""); // a finished turn waits for nobody
});

test("the user's own Always allow is theirs, not a policy's", () => {
  const chips = (decisions, status = "done") => decisionChips(decisions, status).map((c) => c.text);
  const mine = { action: "approved", by: "user", detail: "always allowed by you in this thread" };
  assert.deepEqual(chips([mine]), ["always allowed by you in this thread"]);
  // a record written before the label said whose decision it was
  const old = { action: "approved", by: "policy", detail: "always allowed in this thread" };
  assert.deepEqual(chips([old]), ["always allowed by you in this thread"]);
  assert.deepEqual(chips([{ action: "approved", by: "policy", detail: "unattended" }]), [
    "approved by policy",
  ]);
});

test("a Skip says 'skipped' once (the badge), an edit is in the header, not in a chip", () => {
  const skip = { action: "skipped", by: "user", detail: "the user skipped this tool call" };
  assert.deepEqual(decisionChips([skip], "skipped"), []);
  const edit = { action: "edited", by: "user", detail: '{"a": 5}' };
  assert.deepEqual(decisionChips([edit], "done"), []);
  const denied = { action: "skipped", by: "policy", detail: "run mode skip" };
  assert.deepEqual(
    decisionChips([denied], "skipped").map((c) => c.text),
    ["skipped by policy"],
  );
});

test("a call whose arguments the user edited shows what ran, the original beside it", () => {
  const request = { arguments: { a: 2, b: 3 } };
  const edited = { decisions: [{ action: "edited", by: "user", detail: '{"a": 5, "b": 3}' }] };
  assert.deepEqual(ranArguments(request, edited), {
    args: { a: 5, b: 3 },
    original: { a: 2, b: 3 },
    by: "you", // an older record names nobody
  });
  const none = { args: { a: 2, b: 3 }, original: null, by: null };
  assert.deepEqual(ranArguments(request, null), none);
  const garbled = { decisions: [{ action: "edited", by: "user", detail: "not json" }] };
  assert.deepEqual(ranArguments(request, garbled), none);
});

test("a Skip and an edit saved with the page's user name them", () => {
  const ada = { name: "Ada Lovelace", username: "ada" };
  const skip = { action: "skipped", by: "user", detail: "the user skipped this tool call" };
  const texts = (d) => decisionChips([d], "skipped").map((c) => c.text);
  assert.deepEqual(texts({ ...skip, who: ada }), ["skipped by Ada Lovelace"]);
  assert.deepEqual(texts({ ...skip, who: { name: "you", username: "" } }), ["skipped by you"]);
  const edited = {
    decisions: [{ action: "edited", by: "user", detail: '{"a": 5, "b": 3}', who: ada }],
  };
  assert.equal(ranArguments({ arguments: { a: 2, b: 3 } }, edited).by, "Ada Lovelace");
});

test("a decision saved with the clicking page's user names them; a policy's never does", () => {
  const chips = (decisions, status = "done") => decisionChips(decisions, status).map((c) => c.text);
  const ada = { name: "Ada Lovelace", username: "ada" };
  assert.deepEqual(chips([{ action: "approved", by: "user", who: ada }]), [
    "approved by Ada Lovelace",
  ]);
  assert.deepEqual(chips([{ action: "withheld", by: "user", who: ada }]), [
    "result withheld by Ada Lovelace",
  ]);
  assert.deepEqual(chips([{ action: "approved", by: "user", who: { name: "you" } }]), [
    "approved by you",
  ]);
  // an older record without `who` reads as before; a page's name is a label: one line, capped
  assert.deepEqual(chips([{ action: "approved", by: "user" }]), ["approved"]);
  const long = { name: `Eve\n<b>${"x".repeat(200)}`, username: "eve" };
  const [text] = chips([{ action: "approved", by: "user", who: long }]);
  assert.ok(text.startsWith("approved by Eve <b>xxx") && text.length <= "approved by ".length + 80);
  assert.deepEqual(chips([{ action: "denied", by: "policy", who: ada, detail: "x" }]), [
    "denied by policy",
  ]);
});
