/**
 * A tool card: one tool call, drawn from its `tool_call_request` event, its
 * `tool_call_response` event (once saved) or the live `tools[call_id]` status, and the
 * inquiries asked during the call. Prompts for the call (approve, result review, a question)
 * are placed in the card's prompt slot by prompts.js. A sub-agent call's card also holds its
 * nested transcript (drawn by transcript.js into `nestedBody`, its live draft after it) in a
 * fold above the result, whose summary shows the sub-agent's cycles, tokens and cost.
 *
 * Before its request event exists, a call the model is still writing is a draft card
 * (`ToolInputView`, drawn by the live draft): its name and its argument text so far.
 *
 * Tool text (arguments, progress, results) is only ever set as textContent; a result's images
 * are drawn by images.js (checked `data:` URLs only).
 */
import {
  append,
  contentText,
  formatDuration,
  formatSize,
  h,
  prettyJson,
  resultText,
} from "../util/dom.js";
import { responseStatus } from "../protocol/fields.js";
import { subagentStats, subagentSummary } from "../util/nested.js";
import { ProgressLog } from "../util/progress.js";
import { renderAfterCall } from "./cardactions.js";
import { callSummary, codeArguments, renderArguments } from "./codeargs.js";
import { renderImages } from "./images.js";
import { REVIEWED } from "./review.js";
import { whoName } from "../util/who.js";

/** @typedef {import("../protocol/types.js").LiveTool} LiveTool */
/** @typedef {import("./cardactions.js").CardActions} CardActions */
/** @typedef {import("../protocol/types.js").ToolCallRequestEvent} ToolCallRequestEvent */
/** @typedef {import("../protocol/types.js").ToolCallResponseEvent} ToolCallResponseEvent */
/** @typedef {import("../protocol/types.js").UndoEvent} UndoEvent */
/**
 * @typedef {{request: import("../protocol/types.js").InquiryRequestEvent,
 *            response: import("../protocol/types.js").InquiryResponseEvent | null}} Inquiry
 */
/**
 * @typedef {{request: ToolCallRequestEvent | null, response: ToolCallResponseEvent | null,
 *            live: LiveTool | null, output: ProgressLog | null, inquiries: Inquiry[],
 *            undo: UndoEvent | null}} CallState
 */

const STATUS_LABELS = /** @type {Record<string, string>} */ ({
  pending: "pending",
  waiting: "waiting",
  running: "running",
  done: "done",
  error: "error",
  cancelled: "cancelled",
  skipped: "skipped",
  timeout: "timed out",
});

const DECISION_LABELS = /** @type {Record<string, string>} */ ({
  approved: "approved",
  skipped: "skipped",
  edited: "arguments edited",
  always_allowed: "always allowed",
  delivered: "result delivered",
  withheld: "result withheld",
  result_edited: "result edited",
  cancelled: "cancelled",
  denied: "denied",
});

/**
 * Decision details that are the chip's own words: a replay answered from its recording, a call
 * the user's own "Always allow" let through (records before it said "by you" too: it was theirs).
 */
const DETAIL_LABELS = /** @type {Record<string, string>} */ ({
  "recorded, not run": "recorded, not run",
  "always allowed by you in this thread": "always allowed by you in this thread",
  "always allowed in this thread": "always allowed by you in this thread",
  [REVIEWED]: "made without asking, for your review",
});

/**
 * The decision chips of a finished call, as text: what the card shows nowhere else. An edit is
 * in the header ("edited by Ada"), and a Skip is the badge already unless the record says whose
 * it was ("skipped by Ada"). A decision saved with the clicking page's user says whose it was
 * ("approved by Ada Lovelace").
 * @param {unknown} decisions the response's decisions
 * @param {string} status the response's status
 * @returns {{action: string, text: string, detail: string | null}[]}
 */
export function decisionChips(decisions, status) {
  const list = Array.isArray(decisions) ? decisions : [];
  return list
    .filter(
      (d) =>
        !(d?.by === "user" && d?.action === "edited") &&
        // the badge says "skipped" already: a chip only to say whose Skip it was
        !(d?.by === "user" && d?.action === "skipped" && status === "skipped" && !whoName(d?.who)),
    )
    .map((d) => {
      const action = String(d?.action);
      const detail = d?.detail ? String(d.detail) : null;
      const own = detail !== null ? DETAIL_LABELS[detail] : undefined;
      const who = d?.by === "user" ? whoName(d?.who) : null;
      const by = d?.by === "policy" ? " by policy" : who ? ` by ${who}` : "";
      const text = (who ? null : own) ?? `${DECISION_LABELS[action] ?? action}${by}`;
      return { action, text, detail };
    });
}

/**
 * The arguments a call ran with: the user's edit when they edited them (the model's original
 * beside it, and who edited them), else the request's.
 * @param {ToolCallRequestEvent} request
 * @param {ToolCallResponseEvent | null} response
 * @returns {{args: unknown, original: unknown | null, by: string | null}}
 */
export function ranArguments(request, response) {
  const decisions = Array.isArray(response?.decisions) ? response.decisions : [];
  const edit = decisions.find((d) => d?.action === "edited" && d?.by === "user");
  if (edit && typeof edit.detail === "string") {
    try {
      const args = JSON.parse(edit.detail);
      // an older record names nobody: it was the one person at the page, "you"
      const by = whoName(edit.who) ?? "you";
      if (args && typeof args === "object") return { args, original: request.arguments ?? {}, by };
    } catch {
      // a detail that is not the edited arguments: show the request's
    }
  }
  return { args: request.arguments, original: null, by: null };
}

/** Short text opens by default; long text stays folded. */
const OPEN_LIMIT = { chars: 800, lines: 12 };

/** @param {string} text */
function isShort(text) {
  return text.length <= OPEN_LIMIT.chars && text.split("\n").length <= OPEN_LIMIT.lines;
}

/**
 * A card's parts in the order they stand in it. Those a finished call rarely has (its output
 * lines, a sub-agent's transcript, the questions asked, the prompt slot, the "edited by" mark)
 * are made when first needed: a notebook of saved cards has thousands of them, and each
 * element is styled and laid out as its cell scrolls into view (B11).
 */
const PARTS = ["head", "args", "progress", "nested", "inquiries", "promptSlot", "decisions"];

export class ToolCard {
  /**
   * @param {string} callId
   * @param {CardActions | null} [actions] Undo and "Add to notebook", where the page offers them
   */
  constructor(callId, actions = null) {
    this.callId = callId;
    this.actions = actions;
    this.name = h("span", { class: "jt-tool-name" });
    /** who asked, when not the thread's model (%chat serve: "Claude Code · call 7") */
    this.asker = h("span", { class: "jt-tool-asker", hidden: true });
    this.preview = h("span", { class: "jt-tool-preview" });
    this.badge = h("span", { class: "jt-badge" });
    this.elapsed = h("span", { class: "jt-elapsed" });
    /** @type {HTMLElement | null} "edited by …", once the arguments were edited */
    this.editedEl = null;
    this.head = h(
      "div",
      { class: "jt-tool-head" },
      this.name,
      this.asker,
      this.preview,
      this.badge,
      this.elapsed,
    );
    this.args = h("div", { class: "jt-tool-args" });
    this.decisions = h("div", { class: "jt-decisions" });
    /** @type {Record<string, HTMLElement>} the parts made so far (PARTS' names) */
    this.parts = { head: this.head, args: this.args, decisions: this.decisions };
    /** @type {HTMLElement | null} a sub-agent's fold: its summary and its transcript's body */
    this.nestedSummary = null;
    /** @type {HTMLElement | null} */
    this.nestedBodyEl = null;
    /** @type {HTMLElement | null} the sub-agent's live draft, while it has one */
    this.draftEl = null;
    this.isSubagent = false;
    this.result = h("div", { class: "jt-tool-result" });
    this.el = h(
      "div",
      { class: "jt-tool", "data-call-id": callId },
      this.head,
      this.args,
      this.decisions,
      this.result,
    );
    this.keys = { request: "", response: "", progress: -1, inquiries: "", subagent: "" };
    /** @type {number | null} */
    this.startedAt = null;
    this.running = false;
  }

  /**
   * Part `name` of the card, made by `make` and put in its place the first time it is asked for.
   * @param {string} name one of PARTS
   * @param {() => HTMLElement} make
   * @returns {HTMLElement}
   */
  part(name, make) {
    let el = this.parts[name];
    if (!el) {
      el = make();
      this.parts[name] = el;
      const later = PARTS.slice(PARTS.indexOf(name) + 1).find((next) => this.parts[next]);
      this.el.insertBefore(el, later ? this.parts[later] : this.result);
    }
    return el;
  }

  /** The output lines of a running call (a <pre>, hidden while it has none). */
  get progress() {
    return this.part("progress", () => h("pre", { class: "jt-progress", hidden: true }));
  }

  /** A sub-agent call's fold holding its nested transcript (hidden until it has one). */
  get nested() {
    return this.part("nested", () => {
      this.nestedSummary = h("summary", null, subagentSummary(null));
      this.nestedBodyEl = h("div", { class: "jt-transcript jt-nested-body" });
      const fold = { class: "jt-fold jt-nested", open: true, hidden: true };
      return h("details", fold, this.nestedSummary, this.nestedBodyEl);
    });
  }

  /** Where transcript.js draws a sub-agent's events. */
  get nestedBody() {
    void this.nested;
    return /** @type {HTMLElement} */ (this.nestedBodyEl);
  }

  /** Whether the card has a nested transcript part yet (without making one). */
  get hasNested() {
    return Boolean(this.parts.nested);
  }

  /** The questions asked during the call. */
  get inquiries() {
    return this.part("inquiries", () => h("div", { class: "jt-inquiries" }));
  }

  /** Where prompts.js puts the call's prompts (approve, result review, a question). */
  get promptSlot() {
    return this.part("promptSlot", () => h("div", { class: "jt-prompt-slot" }));
  }

  /** The header's "edited by …" mark, after the preview. */
  edited() {
    this.editedEl ??= this.head.insertBefore(
      h("span", { class: "jt-edited jt-muted", hidden: true }, "edited by you"),
      this.badge,
    );
    return this.editedEl;
  }

  /** @param {CallState} state */
  update({ request, response, live, output, inquiries, undo }) {
    const requestKey = request ? `${request.id}:${response?.id ?? ""}` : "";
    if (request && requestKey !== this.keys.request) {
      this.keys.request = requestKey;
      this.renderRequest(request, response);
    }
    const status = response ? responseStatus(response) : (live?.status ?? "pending");
    this.el.dataset.status = status;
    this.badge.className = `jt-badge jt-badge-${status}`;
    this.badge.textContent = STATUS_LABELS[status] ?? status;

    this.running = !response && status === "running" && typeof live?.started_at === "number";
    this.startedAt = live?.started_at ?? null;
    if (response && typeof response.elapsed === "number") {
      this.elapsed.textContent = formatDuration(response.elapsed * 1000);
    } else if (typeof live?.started_at === "number" && typeof live.ended_at === "number") {
      this.elapsed.textContent = formatDuration(live.ended_at - live.started_at);
    } else if (!this.running) {
      this.elapsed.textContent = "";
    }
    if (this.running) this.tick(Date.now());

    this.renderProgress(output ?? new ProgressLog());
    this.renderSubagent(response, live);
    this.renderInquiries(inquiries);
    const responseKey = response ? `${response.id}:${undo?.id ?? ""}` : "";
    if (responseKey !== this.keys.response) {
      this.keys.response = responseKey;
      this.renderResponse(response, request, undo ?? null);
    }
  }

  /** @param {number} now epoch ms */
  tick(now) {
    if (this.running && this.startedAt !== null) {
      this.elapsed.textContent = formatDuration(now - this.startedAt);
    }
  }

  /**
   * The header's one-line summary and the Arguments block: what ran — the user's edit, marked
   * "edited by" whom, with the model's original folded below it; code arguments as highlighted
   * code (codeargs.js).
   * @param {ToolCallRequestEvent} request
   * @param {ToolCallResponseEvent | null} [response]
   */
  renderRequest(request, response = null) {
    const { args: ran, original, by } = ranArguments(request, response);
    const name = String(request.name ?? "tool");
    const args = /** @type {Record<string, unknown>} */ (ran ?? {});
    this.name.textContent = name;
    const { client, call } = request.metadata ?? {};
    this.asker.hidden = typeof client !== "string" || !client;
    if (!this.asker.hidden) {
      this.asker.textContent = typeof call === "number" ? `${client} · call ${call}` : `${client}`;
    }
    this.preview.textContent = callSummary(name, args);
    if (original !== null || this.editedEl) {
      this.edited().hidden = original === null;
      this.edited().textContent = `edited by ${by ?? "you"}`;
    }
    const pretty = prettyJson(args);
    const shown =
      codeArguments(name, args)
        .map(([, text]) => text)
        .join("\n") || pretty;
    this.args.replaceChildren(
      h(
        "details",
        { class: "jt-fold", open: isShort(shown) && pretty !== "{}" },
        h("summary", null, original === null ? "Arguments" : `Arguments (edited by ${by})`),
        renderArguments(name, args),
        original === null
          ? null
          : h(
              "details",
              { class: "jt-fold jt-original-args" },
              h("summary", null, "The model's original arguments"),
              renderArguments(name, /** @type {Record<string, unknown>} */ (original ?? {})),
            ),
      ),
    );
  }

  /**
   * The kept output lines (bounded by the kernel: a head, a count of what was left out, a
   * tail), redrawn only when they changed.
   * @param {ProgressLog} output
   */
  renderProgress(output) {
    if (output.version === this.keys.progress) return;
    this.keys.progress = output.version;
    const lines = output.lines();
    if (!lines.length && !this.parts.progress) return;
    this.progress.textContent = lines.length ? `${lines.join("\n")}\n` : "";
    this.progress.hidden = lines.length === 0;
    if (lines.length) this.progress.scrollTop = this.progress.scrollHeight;
  }

  /**
   * The nested transcript's summary, from the saved response or the live status.
   * @param {ToolCallResponseEvent | null} response
   * @param {LiveTool | null} live
   */
  renderSubagent(response, live) {
    const stats = subagentStats(response, live);
    const text = subagentSummary(stats);
    this.isSubagent = stats !== null;
    if (!this.isSubagent && !this.hasNested) return;
    void this.nested;
    if (text !== this.keys.subagent) {
      this.keys.subagent = text;
      /** @type {HTMLElement} */ (this.nestedSummary).textContent = text;
    }
    this.refreshNested();
  }

  /**
   * Show the sub-agent's live draft after its nested events (null: it has none now).
   * @param {HTMLElement | null} el
   */
  setDraft(el) {
    if (el === this.draftEl && (!el || el.parentNode === this.nested)) return;
    if (this.draftEl && this.draftEl !== el && this.draftEl.parentNode === this.nested) {
      this.draftEl.remove();
    }
    this.draftEl = el;
    if (el) this.nested.appendChild(el);
    this.refreshNested();
  }

  /** The nested transcript shows once the call has nested events, a live draft or usage. */
  refreshNested() {
    if (!this.hasNested) return;
    const show = this.isSubagent || this.draftEl !== null || this.nestedBody.hasChildNodes();
    if (this.nested.hidden === show) this.nested.hidden = !show;
  }

  /** @param {Inquiry[]} inquiries */
  renderInquiries(inquiries) {
    const key = inquiries.map((q) => `${q.request.id}:${q.response?.id ?? ""}`).join(",");
    if (key === this.keys.inquiries) return;
    if (!inquiries.length && !this.parts.inquiries) return;
    this.keys.inquiries = key;
    this.inquiries.replaceChildren(
      ...inquiries.map(({ request, response }) =>
        h(
          "div",
          { class: "jt-inquiry" },
          h("span", { class: "jt-inquiry-q" }, `? ${String(request.question ?? "")}`),
          response
            ? h(
                "span",
                { class: "jt-inquiry-a" },
                response.answer === null || response.answer === undefined
                  ? " → no answer (nobody could answer)"
                  : ` → ${contentText(response.answer)}`,
                response.by === "policy" ? h("span", { class: "jt-muted" }, " (by policy)") : null,
              )
            : h("span", { class: "jt-muted" }, " → waiting for an answer"),
        ),
      ),
    );
  }

  /**
   * @param {ToolCallResponseEvent | null} response
   * @param {ToolCallRequestEvent | null} [request]
   * @param {UndoEvent | null} [undo]
   */
  renderResponse(response, request = null, undo = null) {
    if (!response) {
      this.decisions.replaceChildren();
      this.result.replaceChildren();
      return;
    }
    const status = responseStatus(response);
    this.decisions.replaceChildren(
      ...decisionChips(response.decisions, status).map((chip) =>
        h("span", { class: `jt-chip jt-chip-${chip.action}`, title: chip.detail }, chip.text),
      ),
    );
    const text = resultText(response.content); // for people: without the model's frame
    // a call that did not run (a Skip, a deny) is not an error: neutral, and said once
    const notRun = status === "skipped";
    const failed = response.is_error && !notRun;
    const label = notRun ? "Not run" : failed ? "Error" : "Result";
    this.result.replaceChildren();
    append(this.result, [
      h(
        "details",
        // a not-run note is the model's, folded: the badge says "skipped" already
        { class: `jt-fold${failed ? " jt-result-error" : ""}`, open: isShort(text) && !notRun },
        h(
          "summary",
          null,
          label,
          h("span", { class: "jt-muted" }, ` · ${formatSize(text.length)}`),
        ),
        h("pre", null, text),
      ),
      failed ? renderTraceback(response.outputs, text) : null,
      renderImages(response.images),
      renderReplayCheck(response.replay),
      renderState(response.state),
      renderAfterCall(this.callId, request, response, undo, this.actions),
    ]);
  }
}

/**
 * A tool call's draft card while the model writes its arguments: "⚙ NAME — preparing
 * arguments…" over the argument text so far. That text is the model's, incomplete JSON: it is
 * never parsed, and only ever set as text. `append` only queues a piece; `render` adds what
 * came since the last frame to one Text node, so a piece costs its own length, never a redraw
 * of the card. The call's card (its request event) replaces it once the kernel releases it.
 */
export class ToolInputView {
  /**
   * @param {string} name the tool's name, as the model wrote it
   * @param {string} callId
   */
  constructor(name, callId) {
    this.callId = callId;
    /** @type {string[]} pieces not in the DOM yet */
    this.pending = [];
    this.argsText = document.createTextNode("");
    this.el = h(
      "div",
      { class: "jt-tool-draft", "data-draft-call-id": callId },
      h(
        "div",
        { class: "jt-tool-head" },
        h("span", { class: "jt-tool-name" }, `⚙ ${name || "tool"}`),
        h("span", { class: "jt-muted" }, "— preparing arguments…"),
      ),
      h("pre", { class: "jt-tool-args-draft" }, this.argsText),
    );
  }

  /** @param {string} chunk */
  append(chunk) {
    if (chunk) this.pending.push(chunk);
  }

  /** The argument text so far (drawn or not). */
  text() {
    return this.pending.length ? this.argsText.data + this.pending.join("") : this.argsText.data;
  }

  render() {
    if (!this.pending.length) return;
    this.argsText.appendData(this.pending.join(""));
    this.pending = [];
  }
}

/**
 * What a python run did to the kernel's namespace: "Kernel: created total; rebound x; ...".
 * @param {unknown} state the response's `state`: `{created, rebound, deleted, changed}`
 */
function renderState(state) {
  if (!state || typeof state !== "object") return null;
  const record = /** @type {Record<string, unknown>} */ (state);
  /** @type {string[]} */
  const parts = [];
  for (const [key, label] of [
    ["created", "created"],
    ["rebound", "rebound"],
    ["deleted", "deleted"],
    ["changed", "changed in place"],
  ]) {
    const items = Array.isArray(record[key]) ? /** @type {unknown[]} */ (record[key]) : [];
    const names = items.map((item) =>
      item && typeof item === "object"
        ? String(/** @type {any} */ (item).name ?? "?")
        : String(item),
    );
    if (names.length) parts.push(`${label} ${names.join(", ")}`);
  }
  return parts.length
    ? h("div", { class: "jt-state jt-muted" }, `Kernel: ${parts.join("; ")}`)
    : null;
}

/**
 * A tool that raised: its full traceback (saved as an nbformat error output), folded — the
 * result above already says the exception and the line of the user's code. Not repeated when
 * the result holds it already (a python run's stderr).
 * @param {unknown} outputs the response's `outputs`
 * @param {string} text the result text
 */
function renderTraceback(outputs, text) {
  const list = Array.isArray(outputs) ? outputs : [];
  const error = list.find((o) => o?.output_type === "error" && Array.isArray(o.traceback));
  if (!error || text.includes("Traceback (most recent call last)")) return null;
  return h(
    "details",
    { class: "jt-fold jt-traceback" },
    h("summary", null, "Full traceback"),
    h("pre", null, error.traceback.map(String).join("\n")),
  );
}

/**
 * A replayed call whose result is not the recorded one: say so, with the recorded result.
 * @param {unknown} check the response's `replay`: `{same, saved?}`
 */
function renderReplayCheck(check) {
  const replay = /** @type {{same?: unknown, saved?: unknown} | null} */ (
    check && typeof check === "object" ? check : null
  );
  if (!replay || replay.same !== false) return null;
  return h(
    "details",
    { class: "jt-fold jt-replay-differs" },
    h("summary", null, "Replay: this result differs from the recording"),
    h("pre", null, contentText(replay.saved ?? "")),
  );
}
