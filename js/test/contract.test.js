import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { EVENT_FIELDS } from "../src/fields.js";

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

/** Does `path` (dotted) name a property the schema declares? */
function declared(def, path) {
  let node = def;
  for (const key of path.split(".")) {
    node = node?.properties?.[key];
    if (!node) return false;
  }
  return true;
}

/** @returns {unknown} the value at `path` in `event`, or undefined */
function at(event, path) {
  return path.split(".").reduce((value, key) => value?.[key], event);
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
      if (!events.some((e) => at(e, path) !== undefined)) missing.push(`${kind}.${path}`);
    }
  }
  assert.deepEqual(missing, []);
});

test("a block's type is read where the kernel keeps it", () => {
  assert.equal(declared(kinds().get("block"), "metadata.type"), false);
  assert.equal(declared(kinds().get("block"), "metadata.raw_block.type"), true);
});
