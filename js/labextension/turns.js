/**
 * A chat cell whose turn never finished: its one output is still the live widget (the kernel
 * died or restarted mid-turn), which a reopened notebook could only show as "Error displaying
 * widget". The kernel kept the turn so far in the cell's metadata, marked `live`; these
 * functions put that record in the widget's place. No Jupyter imports: runs (and is tested)
 * anywhere.
 */

import { METADATA_KEY as KEY, RECORD_MIME, WIDGET_MIME } from "./constants.js";

/**
 * @typedef {{data: Record<string, unknown>}} OutputLike
 * @typedef {{type: string, oldValues?: OutputLike[]}} OutputsChange
 * @typedef {{length: number, get(i: number): OutputLike, set(i: number, output: object): void,
 *            clear?(): void, add?(output: object): void,
 *            changed?: {connect(fn: (sender: unknown, change: OutputsChange) => void): void}}}
 *   OutputsLike
 * @typedef {{id?: string, getMetadata?(key: string): unknown,
 *            setMetadata?(key: string, value: unknown): void, outputs?: OutputsLike}} CellLike
 * @typedef {{cells: {length: number, get(i: number): CellLike}}} NotebookLike
 */

/**
 * The output a saved record is shown as (the kernel's own final bundle has an HTML copy too).
 * @param {Record<string, any>} record
 */
export function recordOutput(record) {
  const events = Array.isArray(record.events) ? record.events.length : 0;
  const state = record.live === true ? " · did not finish" : "";
  const text = `Conversation · thread ${String(record.thread ?? "main")} · ${events} event${events === 1 ? "" : "s"}${state}`;
  return {
    output_type: "display_data",
    data: { [RECORD_MIME]: record, "text/plain": text },
    metadata: {},
  };
}

/**
 * @param {CellLike} cell
 * @returns {Record<string, any> | null} the cell's saved turn, if it is a record
 */
function savedRecord(cell) {
  const value = cell.getMetadata?.(KEY);
  if (!value || typeof value !== "object" || Array.isArray(value)) return null;
  const record = /** @type {Record<string, any>} */ (value);
  return Array.isArray(record.events) ? record : null;
}

/**
 * Every chat cell whose turn did not finish gets its saved record in place of its widget.
 * Call when the kernel has died or restarted, and when a notebook is opened. `shown` holds,
 * by cell index, the events a live view still showed (its drafts as `partial` events): the
 * page saw more than the kernel had saved, and that is what is kept. `running` names the cells
 * whose turn the kernel runs now (it said so when the page opened): their widget is live and
 * stays (a page reloaded mid-turn, or joining a shared notebook, would otherwise take a running
 * turn's view away, from every page of a shared one).
 * @param {NotebookLike | null} model
 * @param {Map<number, object[]>} [shown]
 * @param {ReadonlySet<string>} [running]
 * @returns {number} how many outputs were replaced
 */
export function showUnfinishedTurns(model, shown = new Map(), running = new Set()) {
  let replaced = 0;
  const cells = model?.cells;
  for (let i = 0; cells && i < cells.length; i++) {
    const cell = cells.get(i);
    if (typeof cell.id === "string" && running.has(cell.id)) continue;
    replaced += joinLiveParts(cell);
    const saved = savedRecord(cell);
    const seen = shown.get(i);
    const record =
      saved && seen && seen.length >= saved.events.length ? { ...saved, events: seen } : saved;
    const outputs = cell.outputs;
    if (!record || record.live !== true || !outputs) continue;
    for (let j = 0; j < outputs.length; j++) {
      if (WIDGET_MIME in (outputs.get(j).data ?? {})) {
        outputs.set(j, recordOutput(record));
        replaced++;
      }
    }
  }
  return replaced;
}

/**
 * What a finished chat cell keeps in its metadata while its output holds the record: a pointer
 * (the record is not stored twice in the file). See keepWhenCleared.
 * @param {Record<string, any>} record
 */
export function pointerTo(record) {
  return {
    version: record.version,
    conversation_id: record.conversation_id,
    thread: record.thread,
    in_output: RECORD_MIME,
  };
}

/**
 * The newest output data of type `mime` in a cell, if any.
 * @param {CellLike} cell
 * @param {string} mime
 * @returns {unknown}
 */
export function outputData(cell, mime) {
  const outputs = cell.outputs;
  for (let i = (outputs?.length ?? 0) - 1; outputs && i >= 0; i--) {
    const data = outputs.get(i).data ?? {};
    if (mime in data) return data[mime];
  }
  return undefined;
}

/** @type {WeakMap<object, Record<string, any>>} the record each watched cell's output holds */
const kept = new WeakMap();

/**
 * When the cell's output holding `record` goes (Clear Outputs, a re-run), the record moves into
 * the cell's metadata in place of the pointer, so the conversation stays in the file. The
 * record is kept from when it was shown: a cleared output's model may already be disposed.
 * @param {CellLike} cell
 * @param {Record<string, any>} record
 */
export function keepWhenCleared(cell, record) {
  const watching = kept.has(cell);
  kept.set(cell, record);
  if (watching || !cell.outputs?.changed) return;
  cell.outputs.changed.connect(() => {
    const held = kept.get(cell);
    const pointer = /** @type {any} */ (cell.getMetadata?.(KEY));
    if (!held || pointer?.in_output !== RECORD_MIME) return;
    if (pointer.conversation_id !== held.conversation_id) return;
    const shown = /** @type {any} */ (outputData(cell, RECORD_MIME));
    if (shown?.conversation_id === held.conversation_id) return; // still there
    cell.setMetadata?.(KEY, held);
  });
}

/**
 * Watch every chat cell of a notebook whose metadata points at its output.
 * @param {NotebookLike | null} model
 */
export function keepAllWhenCleared(model) {
  const cells = model?.cells;
  for (let i = 0; cells && i < cells.length; i++) {
    const cell = cells.get(i);
    const value = /** @type {any} */ (cell.getMetadata?.(KEY));
    const record = /** @type {any} */ (outputData(cell, RECORD_MIME));
    if (value?.in_output === RECORD_MIME && record && typeof record === "object") {
      keepWhenCleared(cell, record);
    }
  }
}

/** @param {unknown} event */
const partial = (event) => Boolean(/** @type {any} */ (event)?.metadata?.partial);

/**
 * `head` (a live record) with `part` joined to it, or null when the part does not continue
 * that turn: as jupyter_turns.record.format.join_live_parts does (a streaming text's later
 * pieces extend it, a finished event that ends one takes its place with its text back, a
 * streaming text followed by a finished event was replaced by it; a turn's last part, not
 * `live`, makes it the finished record: its events as the part's `order` lists them, with
 * its `turn` and `settings`).
 * @param {Record<string, any>} head
 * @param {Record<string, any>} part
 * @returns {Record<string, any> | null}
 */
export function joinLivePart(head, part) {
  const events = Array.isArray(head.events) ? head.events : [];
  const first = events[0];
  if (!first || part.conversation_id !== head.conversation_id || part.continues !== first.id)
    return null;
  const ends = part.extends && typeof part.extends === "object" ? part.extends : {};
  const joined = [...events];
  const where = new Map(joined.map((e, i) => [String(e?.id), i]));
  for (const raw of Array.isArray(part.events) ? part.events : []) {
    if (!raw || typeof raw !== "object") continue;
    const key = String(raw.id);
    const draft = key in ends ? String(ends[key]) : null;
    const ended = draft !== null ? where.get(draft) : undefined;
    if (ended !== undefined) where.delete(/** @type {string} */ (draft));
    let at = ended ?? where.get(key);
    let event = raw;
    if (at !== undefined && (ended !== undefined || partial(raw)))
      event = { ...raw, content: `${joined[at].content ?? ""}${raw.content ?? ""}` };
    if (at === undefined) at = joined.push(event) - 1;
    else joined[at] = event;
    where.set(key, at);
  }
  if (part.live === true) {
    let last = -1;
    joined.forEach((e, i) => (last = partial(e) ? last : i));
    return { ...head, events: joined.filter((e, i) => i > last || !partial(e)) };
  }
  const byId = new Map(joined.map((e) => [String(e?.id), e]));
  const order = Array.isArray(part.order) ? part.order.map(String) : [];
  const { continues: _c, extends: _e, order: _o, events: _v, ...own } = part;
  const { live: _l, ...rest } = head;
  return { ...rest, ...own, events: order.filter((id) => byId.has(id)).map((id) => byId.get(id)) };
}

/**
 * A headless turn saved as it grew left its live record and parts holding what each save
 * added (`continues`): its kernel gone before the end, or ended by a last part (not `live`:
 * the finished record's own keys, with the transcript and summary in its output). They become
 * one output again, the record joined, as the kernel would have written it. How many parts
 * went.
 * @param {CellLike} cell
 */
function joinLiveParts(cell) {
  const outputs = cell.outputs;
  if (!outputs?.clear || !outputs.add) return 0;
  /** @type {object[]} */
  const kept = [];
  /** @type {Map<object, Record<string, any>>} the live records kept, by their output */
  const heads = new Map();
  /** @type {Map<object, Record<string, unknown>>} a finished turn's transcript and summary */
  const endings = new Map();
  let joined = 0;
  for (let i = 0; i < outputs.length; i++) {
    const output = /** @type {any} */ (outputs.get(i));
    const json = typeof output.toJSON === "function" ? output.toJSON() : output;
    const record = output.data?.[RECORD_MIME];
    if (record && typeof record === "object" && "continues" in record) {
      const entry = [...heads].reverse().find(([, head]) => joinLivePart(head, record));
      if (entry) {
        heads.set(entry[0], /** @type {any} */ (joinLivePart(entry[1], record)));
        if (record.live !== true) endings.set(entry[0], json.data ?? {});
      }
      joined++;
      continue;
    }
    if (record?.live === true) heads.set(json, record);
    kept.push(json);
  }
  if (!joined) return 0;
  outputs.clear();
  for (const json of kept) {
    const record = heads.get(json);
    const ending = endings.get(json);
    if (record && ending) {
      const data = { ...ending, [RECORD_MIME]: record };
      outputs.add({ output_type: "display_data", data, metadata: {} });
    } else outputs.add(record ? recordOutput(record) : json);
  }
  return joined;
}

/**
 * Every cell whose headless turn ended as live parts (jupyter_turns.record.format.end_part)
 * shows it as one output: the record joined, its transcript and summary. Such a turn is
 * finished, never a running one: this needs no word from the kernel, and runs as the notebook
 * opens. How many parts went.
 * @param {NotebookLike | null} model
 */
export function joinEndedTurns(model) {
  let joined = 0;
  const cells = model?.cells;
  for (let i = 0; cells && i < cells.length; i++) {
    const cell = cells.get(i);
    const outputs = cell.outputs;
    let ended = false;
    for (let j = 0; outputs && j < outputs.length; j++) {
      const record = /** @type {any} */ (outputs.get(j).data?.[RECORD_MIME]);
      ended ||= Boolean(record && "continues" in record && record.live !== true);
    }
    if (ended) joined += joinLiveParts(cell);
  }
  return joined;
}
