/**
 * A cell's provenance stamp (`metadata.jupyter_turns.provenance`, the shape of
 * `jupyter_turns/model/provenance.py`, `$defs/Provenance` in docs/event-schema.json): written
 * with the model's change to the cell (edit.js), read back for the cell's badge (badges.js).
 * No Jupyter imports: runs (and is tested) anywhere.
 *
 * A notebook is untrusted: anyone can write anything in a stamp. `readStamp` checks the shape
 * and gives plain, capped text or null (then no badge); the badge's text is set as textContent
 * only.
 */
import { METADATA_KEY as KEY, RECORD_MIME } from "./constants.js";

/** @typedef {{name: string}} StampWho */
/**
 * @typedef {{thread: string, conversation_id: string, turn: number, call_id: string,
 *            tool: string, timestamp: string, model: string | null, who: StampWho | null,
 *            notebook: string | null, client: string | null, call: number | null}} Stamp
 *   client, call: a terminal agent's call through `%chat serve` (its MCP client, the call's
 *   number in that session)
 */

const TOOLS = /** @type {Record<string, string>} */ ({
  insert_cell: "from chat",
  edit_cell: "edited from chat",
  run_cell: "run from chat",
});

/**
 * One line of plain text of at most `max` characters, or null: control and format characters
 * (newlines, bidi overrides) become spaces (the kernel's sanitizing of names does the same).
 * @param {unknown} value
 * @param {number} max
 * @returns {string | null}
 */
function line(value, max) {
  if (typeof value !== "string") return null;
  const text = value.replace(/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\s]+/gu, " ").trim();
  return text && text.length <= max ? text : null;
}

/**
 * An optional field: absent or null is null; anything else must be valid (`undefined`: not).
 * @param {unknown} value
 * @param {(v: unknown) => any} read
 */
function optional(value, read) {
  if (value === undefined || value === null) return null;
  const read_ = read(value);
  return read_ === null ? undefined : read_;
}

/**
 * The stamp, checked: the fields a badge shows, as plain text; null for anything else.
 * @param {unknown} value
 * @returns {Stamp | null}
 */
export function readStamp(value) {
  if (!value || typeof value !== "object" || Array.isArray(value)) return null;
  const raw = /** @type {Record<string, unknown>} */ (value);
  const turn = raw.turn;
  if (typeof turn !== "number" || !Number.isInteger(turn) || turn < 1 || turn > 1e9) return null;
  if (typeof raw.tool !== "string" || !Object.hasOwn(TOOLS, raw.tool)) return null;
  const fields = {
    thread: line(raw.thread, 100),
    conversation_id: line(raw.conversation_id, 200),
    call_id: line(raw.call_id, 200),
    timestamp: line(raw.timestamp, 100),
  };
  if (Object.values(fields).some((v) => v === null)) return null;
  const model = optional(raw.model, (v) => line(v, 200));
  const notebook = optional(raw.notebook, (v) => line(v, 1000));
  const who = optional(raw.who, (v) => {
    const name = v && typeof v === "object" ? line(/** @type {any} */ (v).name, 80) : null;
    return name === null ? null : { name };
  });
  const client = optional(raw.client, (v) => line(v, 100));
  const call = optional(raw.call, (v) =>
    typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 1e9 ? v : null,
  );
  if ([model, notebook, who, client, call].includes(undefined)) return null;
  return /** @type {Stamp} */ ({
    ...fields,
    turn,
    tool: raw.tool,
    model,
    notebook,
    who,
    client,
    call,
  });
}

/**
 * @param {{getMetadata?(key: string): unknown}} cell
 * @returns {unknown} the cell's stamp as saved (unchecked)
 */
export function savedStamp(cell) {
  const ours = /** @type {any} */ (cell.getMetadata?.(KEY));
  return ours && typeof ours === "object" && !Array.isArray(ours) ? ours.provenance : undefined;
}

/**
 * Write (or, with null, remove) the cell's stamp, keeping the rest of its `jupyter_turns`
 * metadata. A stamp that names no notebook gets `path`, where the change is made.
 * @param {{getMetadata?(key: string): unknown, setMetadata?(key: string, value: unknown): void,
 *          deleteMetadata?(key: string): void}} cell
 * @param {unknown} stamp
 * @param {string | null} path
 */
export function writeStamp(cell, stamp, path) {
  const held = /** @type {any} */ (cell.getMetadata?.(KEY));
  const ours = held && typeof held === "object" && !Array.isArray(held) ? { ...held } : {};
  if (stamp && typeof stamp === "object" && !Array.isArray(stamp)) {
    const given = /** @type {Record<string, unknown>} */ (stamp);
    ours.provenance = "notebook" in given || path === null ? given : { ...given, notebook: path };
  } else {
    delete ours.provenance;
  }
  if (Object.keys(ours).length) cell.setMetadata?.(KEY, ours);
  else cell.deleteMetadata?.(KEY);
}

/**
 * The badge's words: "from chat · turn 3" ("from Claude Code · call 7" for a terminal agent's
 * call through `%chat serve`), naming the notebook it came from when the turn's conversation
 * is not in this one and that notebook is another ("from chat in analysis.ipynb · turn 3").
 * @param {Stamp} stamp
 * @param {{path: string | null, here: boolean}} where this notebook's path; whether it holds
 *   the stamp's conversation
 */
export function badgeText(stamp, { path, here }) {
  const elsewhere = !here && stamp.notebook !== null && stamp.notebook !== path;
  const source = stamp.client ? TOOLS[stamp.tool].replace("chat", stamp.client) : null;
  const said = source ?? TOOLS[stamp.tool];
  const from = elsewhere ? `${said} in ${stamp.notebook}` : said;
  return source && stamp.call ? `${from} · call ${stamp.call}` : `${from} · turn ${stamp.turn}`;
}

/**
 * The badge's tooltip: the rest of the stamp, as text.
 * @param {Stamp} stamp
 */
export function badgeTitle(stamp) {
  const parts = [`thread ${stamp.thread}`, `turn ${stamp.turn}`, `${stamp.tool} ${stamp.call_id}`];
  if (stamp.model) parts.push(`model ${stamp.model}`);
  if (stamp.client) parts.push(`asked by ${stamp.client}`);
  if (stamp.who) parts.push(`approved by ${stamp.who.name}`);
  parts.push(stamp.timestamp);
  return parts.join(" · ");
}

/**
 * What a click on the badge says when it cannot go to the turn's card.
 * @param {Stamp} stamp
 * @param {string | null} path
 */
export function notHere(stamp, path) {
  return stamp.notebook !== null && stamp.notebook !== path
    ? `That conversation is in ${stamp.notebook}, not in this notebook.`
    : `The chat cell of turn ${stamp.turn} is no longer in this notebook.`;
}

/**
 * @typedef {{length: number, get(i: number): {data?: Record<string, unknown>}}} OutputsLike
 * @typedef {{getMetadata?(key: string): unknown, outputs?: OutputsLike}} CellLike
 */

/**
 * The conversation records a cell holds: its metadata (a record, or a pointer naming the
 * conversation) and the records in its outputs.
 * @param {CellLike} cell
 * @returns {Record<string, any>[]}
 */
function records(cell) {
  const found = [];
  const meta = /** @type {any} */ (cell.getMetadata?.(KEY));
  if (meta && typeof meta === "object" && typeof meta.conversation_id === "string")
    found.push(meta);
  const outputs = cell.outputs;
  for (let i = 0; outputs && i < outputs.length; i++) {
    const record = /** @type {any} */ (outputs.get(i).data?.[RECORD_MIME]);
    if (record && typeof record === "object") found.push(record);
  }
  return found;
}

/**
 * @param {Record<string, any>} record
 * @param {string} callId
 */
function holdsCall(record, callId) {
  return (
    Array.isArray(record.events) &&
    record.events.some(
      (/** @type {any} */ e) => e?.kind === "tool_call_request" && e?.call_id === callId,
    )
  );
}

/**
 * The chat cell holding the stamp's turn: the one whose record holds the call (its card is
 * there, `exact`), else the first cell of the conversation; null when the conversation is not
 * in this notebook.
 * @param {{cells: {length: number, get(i: number): CellLike}} | null} model
 * @param {Stamp} stamp
 * @returns {{index: number, exact: boolean} | null}
 */
export function turnCell(model, stamp) {
  /** @type {{index: number, exact: boolean} | null} */
  let first = null;
  for (let i = 0; model && i < model.cells.length; i++) {
    const mine = records(model.cells.get(i)).filter(
      (r) => r.conversation_id === stamp.conversation_id,
    );
    if (mine.some((r) => holdsCall(r, stamp.call_id))) return { index: i, exact: true };
    if (mine.length && first === null) first = { index: i, exact: false };
  }
  return first;
}
