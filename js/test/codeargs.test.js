import assert from "node:assert/strict";
import { test } from "node:test";

/**
 * A tool call's code arguments (render/codeargs.js) as the approval prompt and the tool card
 * show them: multi-line, highlighted, exactly the text that will run, never parsed as HTML;
 * the card's header a one-line summary. The DOM is test/fakedom.js, which refuses HTML.
 */
import { created, install } from "./fakedom.js";

install();

const { ToolCard } = await import("../src/render/toolcard.js");
const { BUILDERS } = await import("../src/live/prompt-forms.js");
const { callSummary, codeArguments } = await import("../src/render/codeargs.js");

const CODE =
  'import pandas as pd\ndf = pd.read_csv("data.csv")  # <img src=x onerror=alert(1)>\nprint(df.shape)';

/** The request event of a `python` call. */
const request = (args) => ({
  id: "e1",
  kind: "tool_call_request",
  call_id: "c1",
  name: "python",
  arguments: args,
});

/** The card drawn from a request alone, as a saved card is (no kernel, no schema). */
function card(args) {
  const view = new ToolCard("c1");
  view.renderRequest(request(args));
  return view;
}

/** The text of each line of the highlighted block, as a person sees them. */
const lines = (el) => el.find("jt-cell-code")[0].textContent.split("\n");

test("a python call's code shows as a multi-line highlighted block with the exact text", () => {
  const view = card({ code: CODE });
  const [block] = view.args.find("jt-cell-code");
  assert.ok(block, "the code is a code block, not JSON");
  assert.deepEqual(lines(view.args), CODE.split("\n"));
  assert.equal(view.args.find("jt-arg-name")[0].textContent, "code");
  assert.ok(!view.args.textContent.includes("\\n"), "no escaped newlines");
  assert.ok(!view.args.textContent.includes('"code":'), "no JSON around it");
  const keywords = block.find("hljs-keyword").map((el) => el.textContent);
  assert.deepEqual(keywords, ["import", "as"]);
  assert.deepEqual(
    block.find("hljs-string").map((el) => el.textContent),
    ['"data.csv"'],
  );
  assert.equal(block.find("hljs-comment")[0].textContent, "# <img src=x onerror=alert(1)>");
  assert.deepEqual(
    block.find("hljs-built_in").map((el) => el.textContent),
    ["print"],
  );
});

test("HTML in code stays text: no element is made from it", () => {
  const hostile = '"<img src=x onerror=alert(1)>"\n</code><script>alert(2)</script>';
  created.length = 0;
  const view = card({ code: hostile });
  assert.equal(view.args.find("jt-cell-code")[0].textContent, hostile);
  for (const tag of ["img", "script"]) assert.ok(!created.includes(tag), `no <${tag}>`);
  assert.ok(
    created.every((tag) => ["div", "span", "pre", "code", "details", "summary"].includes(tag)),
  );
});

test("the card header is the code's first line, cut, with the count of the others", () => {
  assert.equal(card({ code: CODE }).preview.textContent, "(import pandas as pd … +2 lines)");
  assert.equal(callSummary("python", { code: "\n\n  x = 1\n" }), "(x = 1 … +3 lines)");
  assert.equal(callSummary("python", { code: "x = 1" }), "(x = 1)");
  const long = `total = ${"1 + ".repeat(40)}1`;
  assert.equal(callSummary("python", { code: long }), `(${long.slice(0, 71)}…)`);
  // a call without code keeps its compact JSON
  assert.equal(callSummary("add", { a: 1, b: 2 }), '({"a":1,"b":2})');
});

test("other arguments stay JSON beside the code; a call without code is JSON as before", () => {
  const view = card({ sql: "SELECT a\nFROM t\nWHERE b > 1", limit: 10 });
  assert.deepEqual(lines(view.args), ["SELECT a", "FROM t", "WHERE b > 1"]);
  assert.ok(view.args.find("hljs-keyword").length >= 3, "highlighted as SQL");
  assert.equal(view.args.find("jt-args-json")[0].textContent, '{\n  "limit": 10\n}');
  const plain = card({ city: "Oslo", code: 3 }); // a number named code is not code
  assert.equal(plain.args.find("jt-cell-code").length, 0);
  assert.equal(
    plain.args.find("jt-args-json")[0].textContent,
    '{\n  "city": "Oslo",\n  "code": 3\n}',
  );
});

test("the rule: code and source are Python, sql is SQL, an inserted markdown cell is plain", () => {
  assert.deepEqual(codeArguments("insert_cell", { source: "x = 1", run: true }), [
    ["source", "x = 1", "python"],
  ]);
  assert.deepEqual(codeArguments("insert_cell", { source: "# T", cell_type: "markdown" }), [
    ["source", "# T", null],
  ]);
  const markdown = card({ source: "# Title\n<b>x</b>", cell_type: "markdown" });
  markdown.renderRequest({
    ...request({ source: "# Title\n<b>x</b>", cell_type: "markdown" }),
    id: "e2",
    name: "insert_cell",
  });
  const [block] = markdown.args.find("jt-cell-code");
  assert.equal(block.textContent, "# Title\n<b>x</b>");
  assert.equal(block.all().filter((el) => el.tagName === "SPAN").length, 0, "not highlighted");
  assert.deepEqual(codeArguments("search", { query: "pandas read_csv" }), []);
});

/** An approval prompt built as the widget builds it, and what its clicks send. */
function approval(prompt) {
  const el = document.createElement("div");
  /** @type {object[]} */
  const sent = [];
  BUILDERS.approval({ type: "approval", id: "p1", call_id: "c1", ...prompt }, el, (msg) =>
    sent.push(msg),
  );
  const button = (label) => el.tags("button").find((b) => b.textContent === label);
  return { el, sent, button };
}

const SCHEMA = {
  type: "object",
  properties: { code: { type: "string" } },
  required: ["code"],
  additionalProperties: false,
};

test("the approval prompt shows the code as the card does", () => {
  const { el } = approval({ name: "python", arguments: { code: CODE }, schema: SCHEMA });
  const shown = el.find("jt-prompt-args")[0];
  assert.deepEqual(lines(shown), CODE.split("\n"));
  assert.ok(shown.find("hljs-keyword").length > 0);
});

test("Edit gives the exact code in its own area, and sends exactly what the user typed", () => {
  const { el, sent, button } = approval({
    name: "python",
    arguments: { code: CODE },
    schema: SCHEMA,
  });
  button("Edit arguments").click();
  const areas = el.tags("textarea");
  assert.equal(areas.length, 1, "the code only: the schema names no other argument");
  assert.equal(areas[0].getAttribute("data-role"), "code-arg:code");
  assert.equal(areas[0].value, CODE);
  const edited = '  x = "\\n"\n\tprint(x)  \n';
  areas[0].value = edited;
  areas[0].dispatchEvent({ type: "input" });
  button("Run with these arguments").click();
  assert.deepEqual(sent, [{ type: "approval", action: "edited", arguments: { code: edited } }]);
});

test("Edit keeps the other arguments as JSON, checked against the schema", () => {
  const schema = {
    type: "object",
    properties: { sql: { type: "string" }, limit: { type: "integer" } },
    required: ["sql"],
  };
  const { el, sent, button } = approval({
    name: "query_db",
    arguments: { sql: "SELECT 1", limit: 5 },
    schema,
  });
  const [code, json] = el.tags("textarea");
  assert.equal(code.value, "SELECT 1");
  assert.equal(json.value, '{\n  "limit": 5\n}');
  json.value = '{"limit": "ten"}';
  json.dispatchEvent({ type: "input" });
  const run = button("Run with these arguments");
  assert.equal(run.disabled, true);
  assert.match(el.find("jt-validation")[0].textContent, /limit/);
  json.value = '{"limit": 10}';
  json.dispatchEvent({ type: "input" });
  code.value = "SELECT 2\nFROM t";
  code.dispatchEvent({ type: "input" });
  run.click();
  assert.deepEqual(sent, [
    { type: "approval", action: "edited", arguments: { limit: 10, sql: "SELECT 2\nFROM t" } },
  ]);
});
