/**
 * Every field of a saved event that the views read, by kind: the page's half of the event
 * contract. `test/contract.test.js` checks each path against `docs/event-schema.json` (generated
 * from the kernel's `events.py`) and against the shared fixture record, so a view that reads a
 * field the kernel does not write fails a test instead of drawing a placeholder. A path goes
 * through lists: `images.label` is the `label` of each of `images`.
 */

/** @typedef {import("./types.js").ConvEvent} ConvEvent */

/** The fields of one image (in a tool result's or an attachment's `images`) images.js reads. */
export const IMAGE_FIELDS = ["media_type", "data", "width", "height", "label"];

/**
 * The fields read from an event of any kind: `parent`, the sub-agent call whose nested
 * transcript draws it (nested.js). Declared by every kind; the fixture has it on some events.
 */
export const COMMON_FIELDS = ["parent"];

export const EVENT_FIELDS = {
  chat_request: [
    "id",
    "content",
    "attachments",
    "attachments.label",
    "attachments.source",
    "attachments.text",
    "attachments.images",
  ],
  reasoning: ["id", "content", "metadata.partial"],
  message: ["id", "content", "metadata.partial"],
  block: [
    "id",
    "metadata.raw_block.type",
    "metadata.raw_block.content",
    "metadata.compaction.tokens_before",
    "metadata.compaction.tokens_after",
  ],
  tool_call_request: ["id", "call_id", "name", "arguments", "metadata.client", "metadata.call"],
  tool_call_response: [
    "id",
    "call_id",
    "content",
    "is_error",
    "status",
    "decisions",
    "elapsed",
    "images",
    ...IMAGE_FIELDS.map((field) => `images.${field}`),
    "subagent",
    "subagent.outcome",
    "subagent.cycles",
    "subagent.usage",
    "subagent.cost_usd",
    "replay",
    "replay.same",
    "replay.saved",
    "state",
    "state.created",
    "state.rebound",
    "state.deleted",
    "state.changed",
    "preview",
    "preview.kind",
    "preview.cell_type",
    "preview.source",
    "preview.diff",
    "outputs",
    "builtin",
  ],
  inquiry_request: ["id", "inquiry_id", "call_id", "question"],
  inquiry_response: ["id", "inquiry_id", "call_id", "answer", "by"],
  notice: ["id", "level", "text"],
  undo: ["id", "call_id", "done", "not_undone"],
  rewind: ["id", "requests", "turn", "done", "not_undone", "by", "who"],
  review: ["id", "kept", "who"],
  error: ["id", "message", "error_type"],
};

/**
 * The status a tool call's response is drawn with: the saved one, except that an error result
 * (`is_error`) is never "done" (a record written before the kernel said so, or a crafted one);
 * skipped, cancelled and timed-out calls keep theirs. The kernel's twin is ToolCallResponse's
 * validator (jupyter_turns/model/events.py).
 * @param {{status?: unknown, is_error?: unknown}} response
 * @returns {string}
 */
export function responseStatus(response) {
  const saved = typeof response.status === "string" && response.status ? response.status : "done";
  return response.is_error === true && saved === "done" ? "error" : saved;
}

/**
 * The provider's type of an opaque block (`redacted_thinking`, `server_tool_use`...).
 * @param {import("./types.js").BlockEvent} event
 * @returns {string}
 */
export function blockType(event) {
  const raw = event.metadata?.raw_block;
  return raw && typeof raw.type === "string" ? raw.type : "provider";
}
