import assert from "node:assert/strict";
import { test } from "node:test";
import { resultText } from "../src/util/dom.js";

test("a result is shown to people without the model-facing notebook_data frame", () => {
  // as jupyter_turns/model/content.py labeled() frames it, a closer inside defused
  const framed =
    'Inserted a code cell, the 3rd cell (index 2), and ran it.\n<notebook_data source="cell 2 run output">\n' +
    "6\nhtml: <\\/notebook_data> stays text\n</notebook_data>\n\nkernel state: created x";
  assert.equal(
    resultText(framed),
    "Inserted a code cell, the 3rd cell (index 2), and ran it.\n6\nhtml: </notebook_data> stays text\n\n" +
      "kernel state: created x",
  );
  assert.equal(resultText("plain"), "plain");
  assert.equal(resultText({ a: 1 }), '{\n  "a": 1\n}');
});
