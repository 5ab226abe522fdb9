import assert from "node:assert/strict";
import { test } from "node:test";
import { gaugeInfo, shortCount } from "../src/render/status.js";

test("the context gauge reads the usage's context against the window, coloured near it", () => {
  assert.equal(gaugeInfo(undefined), null);
  assert.equal(gaugeInfo({ used: null, window: 200000 }), null);
  assert.deepEqual(gaugeInfo({ used: 41234, window: 200000 }), {
    text: "41k / 200k context",
    level: "ok",
    share: 41234 / 200000,
  });
  assert.equal(gaugeInfo({ used: 140000, window: 200000 })?.level, "high");
  assert.equal(gaugeInfo({ used: 180000, window: 200000 })?.level, "full");
  assert.deepEqual(gaugeInfo({ used: 950, window: null }), {
    text: "950 context (window unknown for this model)",
    level: "unknown",
    share: null,
  });
});

test("token counts are short: 950, 1.2k, 41k, 1.5M", () => {
  assert.deepEqual([950, 1234, 41234, 1500000, 1000].map(shortCount), [
    "950",
    "1.2k",
    "41k",
    "1.5M",
    "1k",
  ]);
});
