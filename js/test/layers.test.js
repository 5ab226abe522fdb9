/**
 * The layers of src/, lowest first: protocol/ (the page ↔ kernel messages and shapes), util/
 * (pure helpers), render/ (events and records → DOM), live/ (the controllers of a live view),
 * then the entries at the top of src/ (widget.js, record.js). A module imports only its own
 * layer or lower ones — JSDoc `import("…")` types included, since a type edge is a dependency
 * too — so that render/ can draw a saved record without anything of the live widget.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../src");
const LAYERS = ["protocol", "util", "render", "live", "<entry>"];

/** Every specifier a module names: `import … from`, `export … from`, `import "…"`, `import(…)`. */
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

/** @param {string} dir @returns {string[]} the .js files under `dir`, relative to src/ */
function modules(dir = SRC) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modules(path);
    return entry.name.endsWith(".js") ? [relative(SRC, path)] : [];
  });
}

/** @param {string} path relative to src/ @returns {number} its layer's rank (-1: none) */
function rank(path) {
  const parts = path.split("/");
  return LAYERS.indexOf(parts.length === 1 ? "<entry>" : parts[0]);
}

/**
 * The modules of src/ that `text` (the source of `path`) imports, as paths relative to src/.
 * @param {string} path
 * @param {string} text
 */
function importsOf(path, text) {
  return [...text.matchAll(SPECIFIER)]
    .map((match) => match[1])
    .filter((spec) => spec.startsWith("."))
    .map((spec) => relative(SRC, resolve(SRC, dirname(path), spec)))
    .filter((target) => target.endsWith(".js"));
}

test("every module of src/ is in a layer", () => {
  const outside = modules().filter((path) => rank(path) < 0);
  assert.deepEqual(outside, [], `put these in one of ${LAYERS.join(", ")}`);
});

test("the scanner sees static, re-exported and JSDoc type imports", () => {
  const text = [
    'import { h } from "../util/dom.js";',
    'export { x } from "./images.js";',
    '/** @typedef {import("../live/drafts.js").Drafts} Drafts */',
    'import "../protocol/types.js";',
    'import { Marked } from "marked";',
  ].join("\n");
  assert.deepEqual(importsOf("render/x.js", text), [
    "util/dom.js",
    "render/images.js",
    "live/drafts.js",
    "protocol/types.js",
  ]);
});

test("no module imports a layer above its own", () => {
  const upward = [];
  let edges = 0;
  for (const path of modules()) {
    for (const target of importsOf(path, readFileSync(join(SRC, path), "utf8"))) {
      edges += 1;
      if (rank(target) > rank(path)) upward.push(`${path} imports ${target}`);
    }
  }
  assert.ok(edges > 50, `only ${edges} imports found: is the scanner broken?`);
  assert.deepEqual(upward, []);
});
