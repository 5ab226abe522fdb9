import assert from "node:assert/strict";
import { test } from "node:test";

/**
 * An approval, and a saved card, are drawn by what the tool is, never by its name alone
 * (issue 39, point 9): a notebook's `@tool run_cell(code)` asks with every argument it will
 * run, never "Run cell [NaN]?"; the kernel's built-in `run_cell` (the prompt says `builtin`)
 * gets its own form, which still shows any argument it does not draw; a saved card of the
 * notebook's tool offers none of the built-in's buttons. The DOM is fakedom.js.
 */
import { install } from "./fakedom.js";

install();
const { BUILDERS } = await import("../src/live/prompt-forms.js");
const { renderAfterCall } = await import("../src/render/cardactions.js");

const CODE = "import shutil\nshutil.rmtree('/data')";
const SCHEMA = {
  type: "object",
  properties: { code: { type: "string" }, timeout: { type: "integer" } },
  required: ["code"],
};

/** An approval prompt as the widget builds it: its element, its clicks, its text. */
function approval(prompt) {
  const el = document.createElement("div");
  const sent = [];
  BUILDERS.approval({ type: "approval", id: "p1", call_id: "c1", ...prompt }, el, (msg) =>
    sent.push(msg),
  );
  const labels = el.tags("button").map((b) => b.textContent);
  const title = el.find("jt-prompt-title")[0].textContent;
  return { el, sent, labels, title };
}

test("a notebook's run_cell asks with its code, not the built-in's form", () => {
  const { el, labels, title } = approval({
    name: "run_cell",
    arguments: { code: CODE, timeout: 5 },
    schema: SCHEMA,
  });
  assert.equal(title, "Run run_cell?");
  assert.ok(!el.textContent.includes("NaN"));
  const shown = el.find("jt-prompt-args")[0];
  assert.equal(shown.find("jt-cell-code")[0].textContent, CODE); // the code that will run
  assert.match(shown.find("jt-args-json")[0].textContent, /"timeout": 5/);
  assert.deepEqual(labels.slice(0, 3), ["Approve", "Skip", "Edit arguments"]);
  assert.ok(!labels.includes("Run cell"));
});

test("every cell tool's name without the built-in mark gets the form that shows all", () => {
  for (const name of ["insert_cell", "edit_cell", "run_cell", "delete_cell", "move_cell"]) {
    const { el, title } = approval({
      name,
      arguments: { index: "3; rm -rf", source: "x = 1", to: 2 },
      schema: {},
      builtin: "yes", // only `true` marks a built-in
    });
    assert.equal(title, `Run ${name}?`, name);
    assert.match(el.textContent, /rm -rf/, name);
  }
});

test("the kernel's built-in run_cell has its own form", () => {
  const { el, labels, title } = approval({
    name: "run_cell",
    builtin: true,
    arguments: { index: 3 },
    preview: { kind: "run", cell_type: "code", source: "print(1)" },
  });
  assert.equal(title, "Run the 4th cell?");
  assert.deepEqual(labels, ["Run cell", "Skip"]);
  assert.equal(el.find("jt-cell-code")[0].textContent, "print(1)");
  assert.equal(el.find("jt-undrawn-args").length, 0); // it draws every argument it has
});

test("a built-in's form shows every argument it does not draw", () => {
  const step = approval({
    name: "move_cell",
    builtin: true,
    arguments: { index: 1, to: 4, reason: "tidy" },
  });
  assert.equal(step.title, "Move the 2nd cell to be the 5th cell?");
  assert.match(step.el.find("jt-undrawn-args")[0].textContent, /"reason": "tidy"/);
  const cell = approval({
    name: "insert_cell",
    builtin: true,
    arguments: { source: "w = 4", after: 2, extra: [1, 2] },
  });
  assert.equal(cell.title, "Insert a code cell below the 3rd cell?");
  assert.match(cell.el.find("jt-undrawn-args")[0].textContent, /"extra"/);
});

/** The buttons under a saved card. */
const buttons = (el) => (el ? el.tags("button").map((b) => b.textContent) : []);
const ACTIONS = {
  undo: async () => ({ ok: true }),
  addCell: async () => ({ ok: true }),
};

test("a saved card of a notebook tool named like a built-in offers none of its buttons", () => {
  const insert = { name: "insert_cell", arguments: { source: "x = 1" } };
  const python = { name: "python", arguments: { code: "x = 1" } };
  const step = { name: "run_cell", arguments: { code: "x = 1" } };
  for (const request of [insert, python, step]) {
    const mine = { status: "done", builtin: false, preview: { kind: "run", source: "other" } };
    assert.equal(renderAfterCall("k", request, mine, null, ACTIONS), null, request.name);
  }
  const builtin = { status: "done", builtin: true };
  assert.deepEqual(buttons(renderAfterCall("k", insert, builtin, null, ACTIONS)), [
    "Copy cell",
    "Undo",
  ]);
  assert.deepEqual(buttons(renderAfterCall("k", python, builtin, null, ACTIONS)), [
    "Undo",
    "Add to notebook",
  ]);
  // a record saved before the kernel wrote `builtin`: drawn by the name, as it was
  const older = { status: "done" };
  assert.deepEqual(buttons(renderAfterCall("k", python, older, null, ACTIONS)), [
    "Undo",
    "Add to notebook",
  ]);
});

test("a terminal agent's call (%chat serve) names the client and the call above its form", () => {
  const { el, title } = approval({
    name: "run_cell",
    builtin: true,
    arguments: { index: 4 },
    asker: "Claude Code · call 7",
  });
  assert.equal(el.find("jt-prompt-asker")[0].textContent, "Claude Code · call 7 wants to:");
  assert.equal(title, "Run the 5th cell?");
  const plain = approval({ name: "run_cell", builtin: true, arguments: { index: 4 } });
  assert.equal(plain.el.find("jt-prompt-asker").length, 0); // a chat turn's prompt: as before
});
