import assert from "node:assert/strict";
import { test } from "node:test";
import { cellOutputs } from "../src/render/cardactions.js";

test("a python run becomes a cell's outputs: its saved text outputs, then its images", () => {
  const response = {
    outputs: [{ output_type: "stream", name: "stdout", text: "42\n" }, null, "junk"],
    images: [
      { media_type: "image/png", data: "AAAA", label: "figure 1" },
      { media_type: "image/svg+xml", data: "PHN2Zz4=" }, // not an allowed type: left out
      { media_type: "image/png", data: 7 }, // not base64 text: left out
    ],
  };
  assert.deepEqual(cellOutputs(response), [
    { output_type: "stream", name: "stdout", text: "42\n" },
    {
      output_type: "display_data",
      data: { "image/png": "AAAA", "text/plain": "<figure 1>" },
      metadata: {},
    },
  ]);
  assert.deepEqual(cellOutputs({}), []);
});

test("a crafted record's outputs go in as text only: no HTML, no script, no unknown kinds", () => {
  const crafted = {
    outputs: [
      {
        output_type: "display_data",
        data: { "text/html": "<img src=x onerror=alert(1)>", "text/plain": "a table" },
        metadata: { trusted: true },
      },
      { output_type: "stream", name: "<b>", text: ["a", "b"] },
      { output_type: "error", ename: "E", evalue: 1, traceback: ["t", 2] },
      { output_type: "update_display_data", data: { "text/html": "<script></script>" } },
    ],
  };
  assert.deepEqual(cellOutputs(crafted), [
    { output_type: "display_data", data: { "text/plain": "a table" }, metadata: {} },
    { output_type: "stream", name: "stdout", text: "ab" },
    { output_type: "error", ename: "E", evalue: "", traceback: ["t", "2"] },
  ]);
});

test("a python card shows its code once: Add to notebook adds the code the arguments show", async () => {
  const { install } = await import("./fakedom.js");
  install();
  const { ToolCard } = await import("../src/render/toolcard.js");
  const added = [];
  const actions = { undo: async () => ({ ok: true }), addCell: async (c) => added.push(c) };
  const code = "total = sum(x)\ntotal";
  for (const [status, isError] of [
    ["done", false],
    ["error", true],
  ]) {
    const card = new ToolCard("c1", actions);
    card.update({
      request: {
        id: "e1",
        kind: "tool_call_request",
        call_id: "c1",
        name: "python",
        arguments: { code },
      },
      response: {
        id: "e2",
        kind: "tool_call_response",
        call_id: "c1",
        content: "x",
        status,
        is_error: isError,
        decisions: [],
        outputs: [{ output_type: "stream", name: "stdout", text: "42\n" }],
      },
      live: null,
      output: null,
      inquiries: [],
      undo: null,
    });
    const shown = card.el.find("jt-cell-code").map((el) => el.textContent);
    assert.deepEqual(shown, [code], `${status}: the code once, in the arguments`);
    const buttons = card.el.find("jt-button").map((el) => el.textContent);
    assert.ok(buttons.includes("Add to notebook") && buttons.includes("Undo"), status);
  }
});
