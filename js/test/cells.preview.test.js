import assert from "node:assert/strict";
import { test } from "node:test";
import { diffMatches } from "../src/render/cells.js";

// Unified diffs as editing/cell_tools.py's line_diff (difflib, 3 lines of context) writes them.
const BEFORE = ["a = 1", "b = 2", "c = 3", "d = 4", "e = 5", "f = 6", "g = 7", "h = 8"];
const AFTER = ["a = 1", "b = 2", "c = 3", "d = 40", "e = 5", "f = 6", "g = 7", "h = 8"];
const DIFF = [
  "--- current",
  "+++ proposed",
  "@@ -1,7 +1,7 @@",
  ...BEFORE.slice(0, 3).map((l) => ` ${l}`),
  "-d = 4",
  "+d = 40",
  ...BEFORE.slice(4, 7).map((l) => ` ${l}`),
].join("\n");

test("a diff whose new side is the call's text at its place matches", () => {
  assert.equal(diffMatches(DIFF, AFTER.join("\n")), true);
});

test("a saved diff that shows other lines than the call would write does not match", () => {
  const forged = DIFF.replace("+d = 40", "+d = 'harmless'");
  assert.equal(diffMatches(forged, AFTER.join("\n")), false);
  // the call's text changed somewhere the hunk claims to show
  assert.equal(diffMatches(DIFF, AFTER.join("\n").replace("g = 7", "import os")), false);
  // a hunk placed elsewhere than it claims
  assert.equal(diffMatches(DIFF.replace("+1,7", "+2,7"), AFTER.join("\n")), false);
  // no hunk at all proves nothing
  assert.equal(diffMatches("--- current\n+++ proposed", AFTER.join("\n")), false);
  assert.equal(diffMatches("", ""), false);
});

test("an added line that starts with ++ and a removed one with -- are read as lines", () => {
  const diff = ["--- current", "+++ proposed", "@@ -1 +1 @@", "---x", "+++y"].join("\n");
  assert.equal(diffMatches(diff, "++y"), true);
  assert.equal(diffMatches(diff, "--x"), false);
});

test("a hunk that only deletes has an empty new side", () => {
  const diff = ["--- current", "+++ proposed", "@@ -1,2 +1 @@", " a", "-b"].join("\n");
  assert.equal(diffMatches(diff, "a"), true);
});
