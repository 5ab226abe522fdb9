import assert from "node:assert/strict";
import { test } from "node:test";
import { ProgressLog } from "../src/util/progress.js";

/** The kernel's side (tools/output.py with head 2, tail 3): lines numbered 0..total-1. */
function kernel(total, head = 2, tail = 3) {
  const all = Array.from({ length: total }, (_, i) => `l${i}`);
  const headLines = all.slice(0, Math.min(head, total));
  const tailLines = all.slice(Math.max(headLines.length, total - tail));
  const from = total - tailLines.length;
  return {
    /** the trait entry at a status change */
    live: {
      progress: [...headLines, ...tailLines],
      progress_head: headLines.length,
      progress_total: total,
    },
    /** a progress message with the kept lines numbered `first` or later */
    since(first) {
      const runs = [];
      if (first < headLines.length) runs.push([first, headLines.slice(first)]);
      const start = Math.max(first, from, headLines.length);
      if (start < total) runs.push([start, tailLines.slice(start - from)]);
      return { head: headLines.length, from, total, runs };
    },
  };
}

test("new lines append; past the tail's size the middle is counted, not shown", () => {
  const log = new ProgressLog();
  log.merge(kernel(1).since(0));
  assert.deepEqual(log.lines(), ["l0"]);
  log.merge(kernel(4).since(1));
  assert.deepEqual(log.lines(), ["l0", "l1", "l2", "l3"]);
  log.merge(kernel(1000).since(4));
  assert.deepEqual(log.lines(), [
    "l0",
    "l1",
    "… 995 more lines not shown …",
    "l997",
    "l998",
    "l999",
  ]);
});

test("the trait and the messages merge in any order, repeatedly, to the same lines", () => {
  const expected = ["l0", "l1", "… 1,995 more lines not shown …", "l1997", "l1998", "l1999"];
  const inOrder = new ProgressLog();
  inOrder.mergeLive(kernel(100).live);
  inOrder.merge(kernel(2000).since(100));
  const reversed = new ProgressLog();
  reversed.merge(kernel(2000).since(100));
  reversed.mergeLive(kernel(100).live); // an older trait arriving after a newer message
  reversed.merge(kernel(2000).since(100)); // and a message seen twice
  assert.deepEqual(inOrder.lines(), expected);
  assert.deepEqual(reversed.lines(), expected);
  const version = reversed.version;
  reversed.mergeLive(kernel(100).live);
  assert.equal(reversed.version, version, "nothing changed: no redraw");
});

test("a view that rendered late shows the head, what it missed as a count, and the tail", () => {
  const log = new ProgressLog();
  log.mergeLive(kernel(0).live); // the trait when the tool started
  log.merge(kernel(5000).since(4990)); // it missed the messages before this one
  assert.deepEqual(log.lines(), ["… 4,997 more lines not shown …", "l4997", "l4998", "l4999"]);
  log.merge(kernel(5000).since(0)); // what the kernel sends on `ready`
  assert.deepEqual(log.lines(), [
    "l0",
    "l1",
    "… 4,995 more lines not shown …",
    "l4997",
    "l4998",
    "l4999",
  ]);
});

test("a trait without the counts (an older kernel) shows every line", () => {
  const log = new ProgressLog();
  log.mergeLive({ status: "running", progress: ["step 1"] });
  log.mergeLive({ status: "running", progress: ["step 1", "step 2"] });
  assert.deepEqual(log.lines(), ["step 1", "step 2"]);
});
