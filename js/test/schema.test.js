import assert from "node:assert/strict";
import { test } from "node:test";
import { parseArguments } from "../src/util/schema.js";

const schema = {
  type: "object",
  properties: {
    code: { type: "string" },
    rows: { type: "integer" },
    mode: { enum: ["fast", "slow"] },
    tags: { type: "array", items: { type: "string" } },
    limit: { type: ["number", "null"] },
  },
  required: ["code"],
  additionalProperties: false,
};

test("accepts arguments that fit the schema", () => {
  const parsed = parseArguments(
    '{"code": "x", "rows": 3, "mode": "fast", "tags": ["a"], "limit": null}',
    schema,
  );
  assert.deepEqual(parsed, {
    ok: true,
    value: { code: "x", rows: 3, mode: "fast", tags: ["a"], limit: null },
  });
});

test("reports JSON, type, required, enum, items and extra-key problems", () => {
  const cases = [
    ["{", /not valid JSON/],
    ["[1]", /must be a JSON object/],
    ["{}", /missing required "code"/],
    ['{"code": 1}', /arguments\.code: expected string/],
    ['{"code": "x", "rows": 1.5}', /expected integer/],
    ['{"code": "x", "mode": "medium"}', /must be one of/],
    ['{"code": "x", "tags": [1]}', /arguments\.tags\[0\]: expected string/],
    ['{"code": "x", "other": 1}', /unexpected "other"/],
  ];
  for (const [text, pattern] of cases) {
    const parsed = parseArguments(text, schema);
    assert.equal(parsed.ok, false, text);
    assert.match(parsed.errors.join("\n"), pattern, text);
  }
});

test("without a schema any object passes", () => {
  assert.equal(parseArguments('{"a": 1}', undefined).ok, true);
  assert.equal(parseArguments('{"a": 1}', {}).ok, true);
});
