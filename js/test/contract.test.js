import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { COMMON_FIELDS, EVENT_FIELDS, IMAGE_FIELDS } from "../src/protocol/fields.js";

/** The kernel's half of the contract: the schema generated from events.py, and the fixture. */
const read = (path) => JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8"));
const schema = read("../../docs/event-schema.json");
const fixture = read("../../tests/fixtures/record_all_kinds.json");

/** Each event kind's schema, by kind. */
function kinds() {
  const byKind = new Map();
  for (const def of Object.values(schema.$defs)) {
    const kind = def.properties?.kind?.const;
    if (kind) byKind.set(kind, def);
  }
  return byKind;
}

/** A schema node with its `$ref` followed and, for a list, its items' schema. */
function resolve(node) {
  const ref = node?.$ref?.match(/^#\/\$defs\/(.+)$/)?.[1];
  if (ref) return resolve(schema.$defs[ref]);
  if (node?.type === "array") return resolve(node.items);
  return node;
}

/** Does `path` (dotted, through lists) name a property the schema declares? */
function declared(def, path) {
  let node = def;
  for (const key of path.split(".")) {
    node = resolve(node?.properties?.[key]);
    if (!node) return false;
  }
  return true;
}

/** @returns {unknown[]} the values at `path` in `event` (through lists), undefined left out */
function at(event, path) {
  let values = [event];
  for (const key of path.split(".")) {
    values = values
      .flatMap((value) => (Array.isArray(value) ? value : [value]))
      .map((value) => value?.[key])
      .filter((value) => value !== undefined);
  }
  return values;
}

test("the views know every event kind the kernel saves, and no other", () => {
  assert.deepEqual(Object.keys(EVENT_FIELDS).sort(), [...kinds().keys()].sort());
});

test("every field the views read is declared in the kernel's schema", () => {
  const byKind = kinds();
  const unknown = Object.entries(EVENT_FIELDS).flatMap(([kind, paths]) =>
    paths.filter((path) => !declared(byKind.get(kind), path)).map((path) => `${kind}.${path}`),
  );
  assert.deepEqual(unknown, []);
});

test("the shared fixture holds every field the views read, for every kind", () => {
  const missing = [];
  for (const [kind, paths] of Object.entries(EVENT_FIELDS)) {
    const events = fixture.events.filter((e) => e.kind === kind);
    assert.ok(events.length, `no ${kind} event in the fixture`);
    for (const path of paths) {
      if (!events.some((e) => at(e, path).length)) missing.push(`${kind}.${path}`);
    }
  }
  assert.deepEqual(missing, []);
});

test("the fields read from every kind are declared by every kind and in the fixture", () => {
  for (const [kind, def] of kinds()) {
    for (const path of COMMON_FIELDS) assert.ok(declared(def, path), `${kind}.${path}`);
  }
  for (const path of COMMON_FIELDS) {
    assert.ok(
      fixture.events.some((e) => at(e, path).length),
      `no event with ${path} in the fixture`,
    );
  }
});

test("a block's type is read where the kernel keeps it", () => {
  assert.equal(declared(kinds().get("block"), "metadata.type"), false);
  assert.equal(declared(kinds().get("block"), "metadata.raw_block.type"), true);
});

test("paths go through lists and references", () => {
  const request = kinds().get("chat_request");
  assert.equal(declared(request, "attachments.label"), true);
  assert.equal(declared(request, "attachments.nope"), false);
  assert.deepEqual(at({ a: [{ b: 1 }, {}, { b: 2 }] }, "a.b"), [1, 2]);
});

test("an attachment's images are read like a tool result's", () => {
  const request = kinds().get("chat_request");
  const response = kinds().get("tool_call_response");
  for (const field of IMAGE_FIELDS) {
    assert.ok(declared(request, `attachments.images.${field}`), field);
    assert.ok(declared(response, `images.${field}`), field);
  }
});
