/**
 * Render counters, readable by tests and benchmarks.
 *
 * Per view, on the root element (`.jt-root`), updated at the end of every frame:
 *   data-blocks-parsed   markdown blocks parsed+rendered as finished blocks (each once)
 *   data-tail-renders    re-renders of an unfinished last block while streaming
 *   data-chars-lexed     characters given to the markdown lexer (stays O(total text))
 *   data-deltas          draft text parts received (`delta` parts and `draft` blocks)
 *   data-frames          flushes (at most one per animation frame)
 *   data-adopted         draft blocks whose DOM was kept when they became events
 *   data-redrawn         draft blocks drawn again from their event (it differed from what streamed)
 *   data-fallbacks       tails the lexer could not split (rendered whole; should stay 0)
 * Page-wide totals over all views: `window.__jupyter_turns_stats` (same names in
 * camelCase, plus `views`), with `reset()`.
 */

/** @typedef {"blocksParsed"|"tailRenders"|"charsLexed"|"deltas"|"frames"|"adopted"|"redrawn"|"fallbacks"} Counter */

/** @type {Counter[]} */
const COUNTERS = [
  "blocksParsed",
  "tailRenders",
  "charsLexed",
  "deltas",
  "frames",
  "adopted",
  "redrawn",
  "fallbacks",
];

/** @returns {Record<Counter | "views", number> & {reset(): void}} */
function globalStats() {
  const w = /** @type {any} */ (window);
  if (!w.__jupyter_turns_stats) {
    const totals = /** @type {any} */ ({ views: 0 });
    for (const name of COUNTERS) totals[name] = 0;
    totals.reset = () => {
      for (const name of COUNTERS) totals[name] = 0;
    };
    w.__jupyter_turns_stats = totals;
  }
  return w.__jupyter_turns_stats;
}

export class Stats {
  /** @param {HTMLElement} root */
  constructor(root) {
    this.root = root;
    /** @type {Record<Counter, number>} */
    this.counts = /** @type {any} */ (Object.fromEntries(COUNTERS.map((name) => [name, 0])));
    this.totals = globalStats();
    this.totals.views += 1;
    this.publish();
  }

  /**
   * @param {Counter} name
   * @param {number} [by]
   */
  add(name, by = 1) {
    this.counts[name] += by;
    this.totals[name] += by;
  }

  publish() {
    for (const name of COUNTERS) {
      this.root.setAttribute(
        `data-${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
        String(this.counts[name]),
      );
    }
  }

  dispose() {
    this.totals.views -= 1;
  }
}
