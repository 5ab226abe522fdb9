/**
 * A tool's printed and progress lines as the page holds them. The kernel keeps only the first
 * and the last lines of a long output (jupyter_turns/tools/output.py) and numbers every line;
 * the `tools` trait carries the kept lines at each status change, `progress` messages carry
 * the lines added since. Both are merged here by line number, so merging is idempotent and
 * order-insensitive: a view that renders late, or gets a trait after newer messages, draws
 * the same lines.
 */

/** @typedef {import("../protocol/types.js").LiveTool} LiveTool */
/** @typedef {import("../protocol/messages.js").ProgressUpdate} ProgressUpdate */

export class ProgressLog {
  constructor() {
    /** @type {string[]} */
    this.head = [];
    this.headSize = 0;
    /** @type {string[]} */
    this.tail = [];
    this.tailStart = 0;
    this.keepFrom = 0;
    this.total = 0;
    /** Changes whenever the lines to show change. */
    this.version = 0;
  }

  /** @param {ProgressUpdate} update */
  merge(update) {
    const before = `${this.total}:${this.head.length}:${this.tailStart}:${this.tail.length}`;
    this.headSize = Math.max(this.headSize, Number(update.head) || 0);
    this.keepFrom = Math.max(this.keepFrom, Number(update.from) || 0);
    for (const run of Array.isArray(update.runs) ? update.runs : []) {
      const [start, lines] = run;
      if (!Array.isArray(lines)) continue;
      lines.forEach((line, k) => this.put(Number(start) + k, String(line)));
    }
    const drop = Math.min(this.keepFrom - this.tailStart, this.tail.length);
    if (drop > 0) {
      this.tail.splice(0, drop);
      this.tailStart += drop;
    }
    const seen = this.tail.length ? this.tailStart + this.tail.length : this.head.length;
    this.total = Math.max(this.total, Number(update.total) || 0, seen);
    if (`${this.total}:${this.head.length}:${this.tailStart}:${this.tail.length}` !== before) {
      this.version += 1;
    }
  }

  /**
   * The trait's form: `progress` (head then tail lines), `progress_head`, `progress_total`;
   * without the two numbers (an older kernel) every line is head.
   * @param {LiveTool | null | undefined} live
   */
  mergeLive(live) {
    const lines = Array.isArray(live?.progress) ? live.progress.map(String) : [];
    const head = Math.min(Number(live?.progress_head ?? lines.length), lines.length);
    const total = Math.max(Number(live?.progress_total ?? lines.length), lines.length);
    const tail = lines.slice(head);
    this.merge({
      head,
      from: total - tail.length,
      total,
      runs: [
        [0, lines.slice(0, head)],
        [total - tail.length, tail],
      ],
    });
  }

  /**
   * @param {number} i line number
   * @param {string} line
   */
  put(i, line) {
    if (i < this.headSize) {
      if (i === this.head.length) this.head.push(line);
      return;
    }
    if (i < this.keepFrom) return; // older than the kernel still keeps
    const end = this.tailStart + this.tail.length;
    if (this.tail.length === 0 || i > end) {
      this.tail = [line]; // after a gap: the lines the page never got are counted, not shown
      this.tailStart = i;
    } else if (i === end) {
      this.tail.push(line);
    } // else: a line the page has, or one older than its tail (the tail only moves forward)
  }

  /** What to show: the head, a line counting what is left out, the tail. */
  lines() {
    const cut = this.total - this.head.length - this.tail.length;
    const note = cut > 0 ? [`… ${cut.toLocaleString("en-US")} more lines not shown …`] : [];
    return [...this.head, ...note, ...this.tail];
  }
}
