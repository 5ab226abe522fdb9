/**
 * The saved part of the conversation: `events` (+ live `tools`) → DOM.
 *
 * Events are immutable once persisted, so each one is rendered once and its node kept by
 * event id (reasoning is re-rendered when the display mode changes). Tool calls are drawn
 * as one card per call_id, which collects the request, the response and the inquiries.
 * A sub-agent call's card holds its nested transcript (the events whose `parent` is the call
 * id, laid out by nested.js), drawn the same way into the card, to any depth; `cards`, `calls`
 * and `nodes` cover every depth (call and event ids are unique across them).
 * `update()` is a pure function of its inputs plus this cache; the drafts are only consulted
 * to adopt the DOM of the block the kernel handed to an event (rendered while it streamed).
 */
import { h, reconcile } from "../util/dom.js";
import {
  MessageView,
  renderError,
  renderNotice,
  renderOpaqueBlock,
  renderRequest,
  renderUnknown,
} from "./blocks.js";
import { layout, parentOf } from "../util/nested.js";
import { ProgressLog } from "../util/progress.js";
import { ReasoningView, sameMode } from "./reasoning.js";
import { ToolCard } from "./toolcard.js";
import { renderRewind } from "./cardactions.js";

/** @typedef {import("../util/stats.js").Stats} Stats */
/** @typedef {import("../protocol/types.js").ConvEvent} ConvEvent */
/** @typedef {import("../protocol/types.js").LiveTool} LiveTool */
/** @typedef {import("./reasoning.js").Mode} Mode */
/** @typedef {import("./toolcard.js").CallState} CallState */
/**
 * What the transcript asks of the live drafts (live/drafts.js's Drafts fits; a saved record
 * passes an empty one): the view of the block handed to an event, and each running sub-agent's
 * draft element. Declared here so that render/ imports nothing of live/.
 * @typedef {{adopt(event: ConvEvent, kind: string): MessageView | ReasoningView | null,
 *   nested: Map<string, {el: HTMLElement}>}} Drafts
 */
/** @typedef {import("../util/nested.js").Item} Item */
/** @typedef {{node: Node, mode?: Mode}} Cached */

export class Transcript {
  /**
   * @param {Stats} stats
   * @param {import("./cardactions.js").CardActions | null} [actions] the saved cards' buttons
   */
  constructor(stats, actions = null) {
    this.stats = stats;
    this.actions = actions;
    this.el = h("div", { class: "jt-transcript" });
    /** @type {Map<string, Cached>} */
    this.nodes = new Map();
    /** @type {Map<string, ToolCard>} */
    this.cards = new Map();
    /** @type {Map<string, CallState>} */
    this.calls = new Map();
    /** @type {Set<string>} the request events of the cards drawn */
    this.requests = new Set();
    /** @type {Map<string, ProgressLog>} each call's output lines (from the trait and messages) */
    this.outputs = new Map();
  }

  /**
   * @param {ConvEvent[]} events
   * @param {Mode} mode
   * @param {Drafts} drafts
   */
  update(events, mode, drafts) {
    /** @type {Map<string, Cached>} */
    const nodes = new Map();
    /** @type {Set<string>} */
    const drawn = new Set();
    this.calls = collectCalls(events);
    this.draw(this.el, layout(events), { mode, drafts, nodes, drawn });
    for (const callId of this.cards.keys()) {
      if (!drawn.has(callId)) this.cards.delete(callId);
    }
    this.nodes = nodes;
    /** @type {Set<string>} the request events of the cards drawn */
    this.requests = new Set();
    for (const callId of drawn) {
      const request = this.calls.get(callId)?.request;
      if (request) this.requests.add(String(request.id));
    }
  }

  /**
   * Whether event `eventId` is drawn: as its own node, or as the request of a tool card (a
   * draft tool card handed to that event is then let go).
   * @param {string} eventId
   */
  shows(eventId) {
    return this.nodes.has(eventId) || this.requests.has(eventId);
  }

  /**
   * Draw one transcript's items into `container`, then each card's nested transcript.
   * @param {Element} container
   * @param {Item[]} items
   * @param {{mode: Mode, drafts: Drafts, nodes: Map<string, Cached>, drawn: Set<string>}} pass
   *   this update's state: the new node cache, and the cards drawn
   */
  draw(container, items, pass) {
    /** @type {Node[]} */
    const order = [];
    for (const item of items) {
      if ("callId" in item) {
        pass.drawn.add(item.callId);
        order.push(this.card(item.callId).el);
        continue;
      }
      const { event } = item;
      const key = String(event?.id ?? `${pass.nodes.size}`);
      const cached = this.nodes.get(key);
      const fresh =
        cached && (event?.kind !== "reasoning" || (cached.mode && sameMode(cached.mode, pass.mode)))
          ? cached
          : { node: this.renderEvent(event, pass.mode, pass.drafts), mode: pass.mode };
      pass.nodes.set(key, fresh);
      order.push(fresh.node);
    }
    reconcile(container, order);
    for (const item of items) {
      if (!("callId" in item)) continue;
      const card = this.card(item.callId);
      if (!item.nested.length && !card.hasNested) continue; // nothing nested: no part for it
      this.draw(card.nestedBody, item.nested, pass);
      card.refreshNested();
    }
  }

  /**
   * The card of `callId`, at whatever depth it is drawn.
   * @param {string} callId
   */
  card(callId) {
    let card = this.cards.get(callId);
    if (!card) {
      card = new ToolCard(callId, this.actions);
      this.cards.set(callId, card);
    }
    return card;
  }

  /**
   * Put each running sub-agent's draft into its call's card (kept by `drafts` until the card
   * exists), after the nested transcript's events.
   * @param {Drafts} drafts
   */
  placeDrafts(drafts) {
    for (const [callId, card] of this.cards) card.setDraft(drafts.nested.get(callId)?.el ?? null);
  }

  /**
   * Refresh the cards from the live tool status (after update(), or alone when only
   * `tools` changed).
   * @param {Record<string, LiveTool>} tools
   */
  updateTools(tools) {
    for (const [callId, live] of Object.entries(tools ?? {})) this.output(callId).mergeLive(live);
    for (const [callId, call] of this.calls) {
      call.live = tools?.[callId] ?? null;
      call.output = this.outputs.get(callId) ?? null;
      this.cards.get(callId)?.update(call);
    }
  }

  /**
   * New output lines of running tools (a `progress` message).
   * @param {Record<string, import("../protocol/messages.js").ProgressUpdate>} tools
   */
  addProgress(tools) {
    for (const [callId, update] of Object.entries(tools ?? {})) {
      const output = this.output(callId);
      output.merge(update);
      const call = this.calls.get(callId);
      if (call) call.output = output;
      this.cards.get(callId)?.renderProgress(output);
    }
  }

  /** @param {string} callId */
  output(callId) {
    let output = this.outputs.get(callId);
    if (!output) {
      output = new ProgressLog();
      this.outputs.set(callId, output);
    }
    return output;
  }

  /** @param {number} now */
  tick(now) {
    let running = false;
    for (const card of this.cards.values()) {
      card.tick(now);
      running ||= card.running;
    }
    return running;
  }

  /**
   * @param {ConvEvent} event
   * @param {Mode} mode
   * @param {Drafts} drafts
   * @returns {Node}
   */
  renderEvent(event, mode, drafts) {
    switch (event?.kind) {
      case "chat_request":
        return renderRequest(event, this.stats, parentOf(event) === null ? "You" : "Task");
      case "message":
      case "reasoning": {
        const content = typeof event.content === "string" ? event.content : "";
        let view = drafts.adopt(event, event.kind);
        if (!view) {
          view =
            event.kind === "message"
              ? new MessageView(this.stats)
              : new ReasoningView(mode, this.stats);
          view.append(content);
        }
        view.finish(event.metadata);
        return view.el;
      }
      case "notice":
        return renderNotice(event);
      case "error":
        return renderError(event);
      case "block":
        return renderOpaqueBlock(event);
      case "rewind":
        return renderRewind(event);
      case "review": // its outcome shows in the turn's review panel (review.js)
        return h("div", { class: "jt-review-kept", hidden: true });
      default:
        return renderUnknown(event);
    }
  }
}

/**
 * Every tool call's saved state (request, response, inquiries), at every depth, by call id.
 * @param {ConvEvent[]} events
 * @returns {Map<string, CallState>}
 */
function collectCalls(events) {
  /** @type {Map<string, CallState>} */
  const calls = new Map();
  /** @type {Map<string, CallState>} inquiry_id → the call it belongs to */
  const inquiryCalls = new Map();
  /** @param {string} callId */
  const callFor = (callId) => {
    let call = calls.get(callId);
    if (!call) {
      call = {
        request: null,
        response: null,
        live: null,
        output: null,
        inquiries: [],
        undo: null,
      };
      calls.set(callId, call);
    }
    return call;
  };
  for (const event of Array.isArray(events) ? events : []) {
    const kind = event?.kind;
    if (kind === "tool_call_request") {
      callFor(String(event.call_id)).request = event;
    } else if (kind === "tool_call_response") {
      callFor(String(event.call_id)).response = event;
    } else if (kind === "undo") {
      callFor(String(event.call_id)).undo = event;
    } else if (kind === "inquiry_request") {
      const call = callFor(String(event.call_id));
      call.inquiries.push({ request: event, response: null });
      inquiryCalls.set(String(event.inquiry_id), call);
    } else if (kind === "inquiry_response") {
      const call = inquiryCalls.get(String(event.inquiry_id)) ?? callFor(String(event.call_id));
      const open = call.inquiries.find((q) => q.request.inquiry_id === event.inquiry_id);
      if (open) open.response = event;
    }
  }
  return calls;
}
