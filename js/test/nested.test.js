import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { Drafts } from "../src/live/drafts.js";
import {
  callHomes,
  groupByParent,
  layout,
  parentOf,
  subagentFooter,
  subagentStats,
  subagentSummary,
  subagentTotals,
} from "../src/util/nested.js";
import { answeredModel, renderFooter } from "../src/render/status.js";

const fixture = JSON.parse(
  readFileSync(new URL("../../tests/fixtures/record_all_kinds.json", import.meta.url), "utf8"),
);

const ev = (id, kind, extra = {}) => ({ id, kind, ...extra });
const call = (id, callId, parent, kind = "tool_call_request") =>
  ev(id, kind, { call_id: callId, ...(parent ? { parent } : {}) });

/** The layout as nested arrays of ids: an event's id, or [call id, [its nested items]]. */
const shape = (items) =>
  items.map((i) => ("callId" in i ? [i.callId, shape(i.nested)] : i.event.id));

/** Two levels of sub-agents: A runs B, B runs a plain tool C. */
const tree = [
  ev("e1", "chat_request"),
  call("e2", "A", null),
  ev("e3", "chat_request", { parent: "A" }),
  call("e4", "B", "A"),
  ev("e5", "message", { parent: "B" }),
  call("e6", "C", "B"),
  call("e7", "C", "B", "tool_call_response"),
  ev("e8", "message", { parent: "B" }),
  call("e9", "B", "A", "tool_call_response"),
  ev("e10", "message", { parent: "A" }),
  call("e11", "A", null, "tool_call_response"),
  ev("e12", "message"),
];

test("events are grouped by the call whose nested turn produced them, in order", () => {
  const groups = groupByParent(tree);
  const ids = (key) => groups.get(key).map((e) => e.id);
  assert.deepEqual(ids(null), ["e1", "e2", "e11", "e12"]);
  assert.deepEqual(ids("A"), ["e3", "e4", "e9", "e10"]);
  assert.deepEqual(ids("B"), ["e5", "e6", "e7", "e8"]);
  assert.equal(parentOf({ parent: "" }), null);
  assert.equal(parentOf({ parent: 3 }), null);
  assert.equal(parentOf(null), null);
});

test("the layout nests each call's transcript in its card, recursively", () => {
  assert.deepEqual(shape(layout(tree)), [
    "e1",
    ["A", ["e3", ["B", ["e5", ["C", []], "e8"]], "e10"]],
    "e12",
  ]);
  assert.deepEqual(
    [...callHomes(tree)],
    [
      ["A", null],
      ["B", "A"],
      ["C", "B"],
    ],
  );
});

test("a call's card goes where its request is; unreachable and cyclic events are left out", () => {
  const events = [
    call("r1", "X", null),
    // an inquiry about X saved in X's own transcript: X's card stays at the top level
    ev("q1", "inquiry_request", { call_id: "X", inquiry_id: "i", parent: "X" }),
    ev("n1", "message", { parent: "X" }),
    ev("o1", "message", { parent: "missing" }),
    call("c1", "P", "Q"),
    call("c2", "Q", "P"),
    ev("c3", "message", { parent: "P" }),
  ];
  assert.deepEqual(shape(layout(events)), [["X", ["n1"]]]);
});

test("the fixture's sub-agent events are drawn in toolu_sub's card, its tool call too", () => {
  const events = fixture.events;
  assert.deepEqual(
    groupByParent(events)
      .get("toolu_sub")
      .map((e) => e.id),
    ["ev-sub-1", "ev-sub-2", "ev-sub-3", "ev-sub-4", "ev-sub-5"],
  );
  const top = layout(events);
  const sub = top.find((item) => item.callId === "toolu_sub");
  assert.ok(sub, "the sub-agent's card is at the top level");
  assert.deepEqual(shape(sub.nested), [
    "ev-sub-1",
    "ev-sub-2",
    ["toolu_sub_inner", []],
    "ev-sub-5",
  ]);
  for (const id of ["ev-sub-1", "ev-sub-2", "ev-sub-5"]) {
    assert.equal(shape(top).includes(id), false, `${id} is not at the top level`);
  }
  assert.equal(
    top.some((item) => item.callId === "toolu_sub_inner"),
    false,
  );
  assert.equal(callHomes(events).get("toolu_sub_inner"), "toolu_sub");
});

/** A stand-in for Draft (draft.js needs a DOM): records what it was given. */
class FakeDraft {
  constructor(name) {
    this.name = name;
    this.ops = [];
    this.handed = new Map();
    this.blocks = new Map();
    this.removed = false;
    this.el = { remove: () => (this.removed = true) };
  }
  get active() {
    return this.blocks.size > 0 || this.handed.size > 0;
  }
  apply(msg) {
    this.ops.push(msg.type);
    if (msg.type === "delta") for (const [i, kind] of msg.parts) this.blocks.set(i, kind);
    if (msg.type === "released") {
      for (const [i, id] of msg.blocks) {
        if (id !== null) this.handed.set(id, this.blocks.get(i));
        this.blocks.delete(i);
      }
    }
    if (msg.type === "draft_clear") {
      this.blocks.clear();
      this.handed.clear();
    }
  }
  adopt(id, kind) {
    if (this.handed.get(id) !== kind) return null;
    this.handed.delete(id);
    return `${this.name}:${id}`;
  }
  forget(drawn) {
    for (const id of [...this.handed.keys()]) if (drawn(id)) this.handed.delete(id);
  }
}

function drafts() {
  let made = 0;
  return new Drafts(() => new FakeDraft(made++ === 0 ? "top" : `nested${made - 1}`));
}

test("draft messages with a parent go to that call's draft, kept before its card exists", () => {
  const all = drafts();
  all.apply({ type: "delta", parts: [[0, "message", "top"]] });
  all.apply({ type: "delta", parts: [[0, "message", "sub"]], parent: "toolu_sub" });
  all.apply({ type: "delta", parts: [[1, "reasoning", "deep"]], parent: "toolu_deep" });
  assert.deepEqual(all.top.ops, ["delta"]);
  assert.deepEqual([...all.nested.keys()], ["toolu_sub", "toolu_deep"]);
  const sub = all.nested.get("toolu_sub");
  assert.deepEqual([...sub.blocks], [[0, "message"]], "its own block indexes");
  assert.deepEqual([...all.top.blocks], [[0, "message"]]);

  // handed over, then adopted by the event with the same parent only
  all.apply({ type: "released", blocks: [[0, "ev-sub-5"]], parent: "toolu_sub" });
  assert.equal(all.adopt({ id: "ev-sub-5", kind: "message" }, "message"), null);
  assert.equal(
    all.adopt({ id: "ev-sub-5", kind: "message", parent: "toolu_sub" }, "message"),
    `${sub.name}:ev-sub-5`,
  );
  // an empty sub-agent draft is let go (its element leaves the card); others stay
  all.forget(() => false);
  assert.equal(all.nested.has("toolu_sub"), false);
  assert.equal(sub.removed, true);
  assert.ok(all.nested.has("toolu_deep"));
  assert.deepEqual(
    all.entries().map(([key]) => key),
    [null, "toolu_deep"],
  );
});

test("a sub-agent's draft_clear drops only its draft; the top level's drops them all", () => {
  const all = drafts();
  all.apply({ type: "delta", parts: [[0, "message", "a"]] });
  all.apply({ type: "delta", parts: [[0, "message", "b"]], parent: "X" });
  all.apply({ type: "delta", parts: [[0, "message", "c"]], parent: "Y" });
  all.apply({ type: "draft_clear", parent: "X" });
  assert.equal(all.top.active, true);
  assert.equal(all.nested.get("X").active, false);
  assert.equal(all.nested.get("Y").active, true);
  all.apply({ type: "draft_clear" });
  assert.equal(all.top.active, false);
  assert.equal(all.nested.get("Y").active, false);
  all.forget(() => false);
  assert.equal(all.nested.size, 0);
});

test("the card's summary shows the sub-agent's cycles, tokens and cost, saved or live", () => {
  const saved = fixture.events.find((e) => e.id === "ev-sub-resp");
  assert.equal(
    subagentSummary(subagentStats(saved, null)),
    "Sub-agent · 2 cycles · 160 tokens · $0.0003",
  );
  const live = {
    status: "running",
    subagent: { cycles: 1, cost_usd: null, input_tokens: 5, output_tokens: 7 },
  };
  assert.equal(subagentSummary(subagentStats(null, live)), "Sub-agent · 1 cycle · 12 tokens");
  const stopped = { subagent: { outcome: "stopped", cycles: 3, usage: {}, cost_usd: 1.5 } };
  assert.equal(
    subagentSummary(subagentStats(stopped, live)),
    "Sub-agent · stopped · 3 cycles · $1.50",
  );
  assert.equal(subagentStats({ kind: "tool_call_response" }, { status: "done" }), null);
  assert.equal(subagentSummary(null), "Sub-agent");
});

test("the footer adds up the top-level sub-agent responses only", () => {
  const response = (id, sub, parent) => ({
    id,
    kind: "tool_call_response",
    call_id: id,
    ...(sub ? { subagent: sub } : {}),
    ...(parent ? { parent } : {}),
  });
  const events = [
    response("a", { usage: { input_tokens: 100, output_tokens: 20 }, cost_usd: 0.0002 }),
    response("b", { usage: { input_tokens: 30, output_tokens: 10 }, cost_usd: 0.0001 }),
    // nested: already counted in its parent's usage
    response("c", { usage: { input_tokens: 1000, output_tokens: 1000 }, cost_usd: 1 }, "a"),
    response("d", null),
    { id: "m", kind: "message", subagent: { usage: { input_tokens: 5 } } },
  ];
  const totals = subagentTotals(events);
  assert.equal(totals.count, 2);
  assert.equal(totals.input_tokens, 130);
  assert.equal(totals.output_tokens, 30);
  assert.ok(Math.abs(totals.cost_usd - 0.0003) < 1e-12);
  assert.equal(subagentFooter(totals), "sub-agents 160 tokens $0.0003");

  const noCost = subagentTotals([
    response("a", { usage: { input_tokens: 1, output_tokens: 1 }, cost_usd: null }),
  ]);
  assert.equal(subagentFooter(noCost), "sub-agents 2 tokens");
  // a scripted model reports no usage: the footer counts the sub-agent calls instead of "0 tokens"
  const none = { count: 1, input_tokens: 0, output_tokens: 0, cost_usd: null };
  assert.equal(subagentFooter(none), "sub-agents 1");
  assert.equal(subagentFooter(subagentTotals([response("d", null)])), null);
  assert.equal(subagentFooter(subagentTotals(fixture.events)), "sub-agents 160 tokens $0.0003");
});

test("the footer line shows the sub-agents apart, only when there are any", () => {
  const footer = {
    text: "",
    hidden: false,
    replaceChildren(text) {
      this.text = text ?? "";
    },
  };
  const usage = { input_tokens: 1200, output_tokens: 80, cost_usd: 0.0048 };
  renderFooter(footer, usage, { model: "m" }, subagentTotals(fixture.events));
  assert.equal(
    footer.text,
    "m  ·  1,200 in · 80 out  ·  $0.0048 (est.)  ·  sub-agents 160 tokens $0.0003",
  );
  renderFooter(footer, usage, { model: "m" }, subagentTotals([]));
  assert.equal(footer.text, "m  ·  1,200 in · 80 out  ·  $0.0048 (est.)");
});

test("the footer names a turn's endpoint when it is not the default", () => {
  const footer = {
    text: "",
    hidden: false,
    replaceChildren(...nodes) {
      this.text = nodes.map((n) => (typeof n === "string" ? n : n.textContent)).join("");
    },
  };
  const usage = { input_tokens: 1200, output_tokens: 80 };
  renderFooter(footer, usage, { model: "m", endpoint: "http://127.0.0.1:8080" });
  assert.equal(footer.text, "m  ·  via http://127.0.0.1:8080  ·  1,200 in · 80 out");
  renderFooter(footer, usage, { model: "m" });
  assert.equal(footer.text, "m  ·  1,200 in · 80 out");
});

test("the footer shows cache reads and writes, and the writes kept an hour", () => {
  const footer = {
    text: "",
    hidden: false,
    replaceChildren(...nodes) {
      this.text = nodes.map((n) => (typeof n === "string" ? n : n.textContent)).join("");
    },
  };
  const usage = {
    input_tokens: 10,
    output_tokens: 80,
    cache_read_input_tokens: 9000,
    cache_creation_input_tokens: 1500,
  };
  renderFooter(footer, usage, { model: "m" });
  assert.equal(footer.text, "m  ·  10 in · 80 out · 9,000 cache read · 1,500 cache write");
  renderFooter(footer, { ...usage, cache_creation_1h_input_tokens: 1200 }, { model: "m" });
  assert.equal(
    footer.text,
    "m  ·  10 in · 80 out · 9,000 cache read · 1,500 cache write (1,200 kept 1 h)",
  );
});

test("a finished answer's footer names the model that answered, the provider's default too", () => {
  // the thread asked for no model (settings.model is null): the cycles name the one that
  // answered, written only when it changed (a tool loop does not repeat it)
  const cycles = [
    { stop_reason: "tool_use", model: "claude-sonnet-5-5" },
    { stop_reason: "end_turn" },
  ];
  assert.equal(answeredModel(cycles), "claude-sonnet-5-5");
  assert.equal(
    answeredModel([...cycles, { stop_reason: "end_turn", model: "gpt-5-mini" }]),
    "gpt-5-mini",
  );
  assert.equal(answeredModel([]), undefined);
  assert.equal(answeredModel(undefined), undefined);
  const footer = {
    text: "",
    hidden: false,
    replaceChildren(...nodes) {
      this.text = nodes.map((n) => (typeof n === "string" ? n : n.textContent)).join("");
    },
  };
  renderFooter(
    footer,
    { input_tokens: 10, output_tokens: 2 },
    { model: answeredModel(cycles), thread: "main" },
  );
  assert.equal(footer.text, "claude-sonnet-5-5  ·  thread main  ·  10 in · 2 out");
});
