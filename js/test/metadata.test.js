import assert from "node:assert/strict";
import { test } from "node:test";
import { applyMetadata } from "../labextension/metadata.js";

function target(id) {
  return {
    id,
    metadata: new Map(),
    setMetadata(key, value) {
      this.metadata.set(key, value);
    },
    deleteMetadata(key) {
      this.metadata.delete(key);
    },
  };
}

function notebook(...ids) {
  const cells = ids.map(target);
  return Object.assign(target("nb"), {
    cells: { length: cells.length, get: (i) => cells[i] },
    list: cells,
  });
}

test("sets the metadata of the cell with that id", () => {
  const nb = notebook("a", "b");
  assert.deepEqual(applyMetadata(nb, { cell_id: "b", key: "jupyter_turns", value: { x: 1 } }), {
    ok: true,
  });
  assert.deepEqual(nb.list[1].metadata.get("jupyter_turns"), { x: 1 });
  assert.equal(nb.list[0].metadata.size, 0);
  assert.equal(nb.metadata.size, 0);
});

test("sets notebook metadata when cell_id is null and scope is notebook", () => {
  const nb = notebook("a");
  assert.deepEqual(applyMetadata(nb, { cell_id: null, scope: "notebook", key: "k", value: [1] }), {
    ok: true,
  });
  assert.deepEqual(nb.metadata.get("k"), [1]);
});

test("deletes a key on request", () => {
  const nb = notebook("a");
  applyMetadata(nb, { cell_id: "a", key: "k", value: 1 });
  assert.deepEqual(applyMetadata(nb, { cell_id: "a", key: "k", delete: true }), { ok: true });
  assert.equal(nb.list[0].metadata.has("k"), false);
});

test("unknown cells and malformed requests are refused with a reason", () => {
  const nb = notebook("a");
  for (const bad of [
    { cell_id: "zzz", key: "k", value: 1 },
    { cell_id: null, key: "k", value: 1 },
    { cell_id: "a", value: 1 },
    "nope",
    null,
  ]) {
    const reply = applyMetadata(nb, bad);
    assert.equal(reply.ok, false);
    assert.ok(reply.reason.length > 0);
  }
  assert.equal(applyMetadata(null, { cell_id: "a", key: "k", value: 1 }).ok, false);
  assert.equal(nb.list[0].metadata.size, 0);
});
