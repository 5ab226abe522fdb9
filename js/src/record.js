/**
 * A saved conversation record (`application/vnd.jupyter-turns+json`) → DOM, through the same
 * views as the live widget (Transcript, its tool cards, the footer), minus the buttons.
 *
 * Used by the lab extension's mime renderer when a notebook is reopened, and by the live
 * widget's page when the kernel replaces the widget with the final record. The answer is
 * expanded; reasoning and tool details are collapsed and open on click; a sub-agent's nested
 * transcript is drawn open inside its call's card. A record whose turn did not finish (the
 * kernel stopped mid-turn) says so under what was saved.
 */
import { h } from "./util/dom.js";
import { Draft } from "./live/draft.js";
import { Drafts } from "./live/drafts.js";
import { subagentTotals } from "./util/nested.js";
import { renderNotice } from "./render/blocks.js";
import { parseMode } from "./render/reasoning.js";
import { answeredModel, renderFooter } from "./render/status.js";
import { Transcript } from "./render/transcript.js";
import { rewindBar, rewindOf, rewoundBy } from "./render/cardactions.js";
import { Stats } from "./util/stats.js";

/** @typedef {import("./protocol/types.js").ConvEvent} ConvEvent */

/**
 * @typedef {object} SavedRecord
 * @property {ConvEvent[]} [events]
 * @property {string} [thread]
 * @property {{outcome?: string, usage?: Record<string, number>, cost_usd?: number | null,
 *   endpoint?: string, cycles?: {model?: string}[]}} [turn] `endpoint`: where the requests
 *   went, when not the default; `cycles`: how each response ended, naming its model
 * @property {{reasoning?: string, model?: string | null}} [settings]
 * @property {boolean} [live] the turn was still running when this record was saved
 */

const UNFINISHED = "This turn did not finish: the kernel stopped before it ended.";

/**
 * Draw `record` into `host`; returns a function that removes it. `actions` (the lab
 * extension's) give the cards Undo and "Add to notebook", and the turn "Rewind to before this
 * turn"; a rewound turn is drawn greyed, labelled "Rewound".
 * @param {unknown} record
 * @param {HTMLElement} host
 * @param {import("./render/cardactions.js").CardActions | null} [actions]
 * @returns {() => void}
 */
export function renderRecord(record, host, actions = null) {
  const saved = /** @type {SavedRecord} */ (record && typeof record === "object" ? record : {});
  const outcome = saved.turn?.outcome;
  // the live widget's last state, so whatever waited on the live view sees the same end
  const state = saved.live === true ? "unfinished" : outcome === "aborted" ? "aborted" : "complete";
  const root = h("div", { class: "jt-root jt-saved", "data-state": state });
  const events = Array.isArray(saved.events) ? saved.events : [];
  const request = events.find((e) => e?.kind === "chat_request" && !e.parent);
  const rewound = request ? rewindOf(events, String(request.id)) : null;
  if (rewound) {
    root.classList.add("jt-rewound");
    root.appendChild(h("div", { class: "jt-rewound-label" }, rewoundBy(rewound)));
  }
  const stats = new Stats(root);
  const setting = saved.settings?.reasoning === "hidden" ? "hidden" : "progress";
  const mode = parseMode(setting);
  const transcript = new Transcript(stats, actions);
  transcript.update(events, mode, new Drafts(() => new Draft(stats, mode)));
  transcript.updateTools({});
  root.appendChild(transcript.el);
  if (saved.live === true) {
    root.appendChild(
      renderNotice({ kind: "notice", id: "unfinished", level: "warning", text: UNFINISHED }),
    );
  }
  if (actions?.rewind && request && !rewound && state === "complete")
    root.appendChild(rewindBar(String(request.id), actions));
  const footer = h("div", { class: "jt-footer" });
  const usage = saved.turn ? { ...saved.turn.usage, cost_usd: saved.turn.cost_usd } : null;
  const settings = {
    thread: saved.thread,
    model: saved.settings?.model ?? answeredModel(saved.turn?.cycles),
    endpoint: saved.turn?.endpoint ?? undefined,
  };
  renderFooter(footer, usage, settings, subagentTotals(events));
  root.appendChild(footer);
  stats.publish();
  host.appendChild(root);
  return () => {
    stats.dispose();
    root.remove();
  };
}
