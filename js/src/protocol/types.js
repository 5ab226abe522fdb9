/**
 * Shapes of the widget's synced traits (JSDoc only; nothing runs here). The custom messages
 * are in messages.js.
 *
 * Saved conversation events, one typedef per kind, following docs/event-schema.json (generated
 * from jupyter_turns/model/events.py; test/eventtypes.test.js fails when the schema declares a
 * kind or field these typedefs do not). Every kind keeps unknown extra keys (the Python models
 * allow them), so each carries an index signature of `unknown`: a field the renderers read must
 * be declared here to type-check.
 *
 * @typedef {{id: string, timestamp?: string, parent?: string, [extra: string]: unknown}} EventBase
 *   parent: the call_id of the sub-agent call whose nested turn produced the event
 * @typedef {{data: string, media_type: string, label?: string, width?: number|null,
 *            height?: number|null, [extra: string]: unknown}} ImageData
 * @typedef {{label: string, source?: string, text?: string, images?: ImageData[],
 *            [extra: string]: unknown}} Attachment
 * @typedef {{name: string, username?: string}} Who
 *   who clicked, as their page reported it (a label, never a permission)
 * @typedef {{action: string, by: "user"|"policy", detail?: string|null, who?: Who,
 *            [extra: string]: unknown}} Decision
 * @typedef {{input_tokens?: number, output_tokens?: number, cache_read_input_tokens?: number,
 *            cache_creation_input_tokens?: number, cache_creation_1h_input_tokens?: number,
 *            cost_usd?: number|null, events?: number,
 *            stop_reason?: string, provider?: string, model?: string}} Cycle
 * @typedef {EventBase & {kind: "chat_request", content: string,
 *            attachments?: Attachment[]}} ChatRequestEvent
 * @typedef {{type: string, content?: unknown, [key: string]: unknown}} RawBlock
 *   the provider's block, kept verbatim to send back
 * @typedef {EventBase & {kind: "reasoning", content: string,
 *            metadata?: {partial?: boolean, scripted?: boolean, signature?: string,
 *            [key: string]: unknown}}} ReasoningEvent
 * @typedef {EventBase & {kind: "message", content: string,
 *            metadata?: {citations?: object[], partial?: boolean, scripted?: boolean,
 *            [key: string]: unknown}}} MessageEvent
 * @typedef {{mode?: "edit"|"summarize", covers?: string|null, tokens_before?: number|null,
 *            tokens_after?: number|null}} Compaction
 * @typedef {EventBase & {kind: "block", metadata?: {compaction?: Compaction,
 *            raw_block?: RawBlock, scripted?: boolean,
 *            [key: string]: unknown}}} BlockEvent
 * @typedef {EventBase & {kind: "tool_call_request", call_id: string, name: string,
 *            arguments: {[key: string]: unknown},
 *            metadata?: {raw_arguments?: string, raw_block?: RawBlock, scripted?: boolean,
 *            client?: string, call?: number, [key: string]: unknown}}} ToolCallRequestEvent
 * @typedef {{kind: "insert"|"edit"|"run"|"delete"|"move", cell_type?: string, diff?: string,
 *            index?: number, run?: boolean, source?: string, after?: number, to?: number,
 *            outputs?: string[]}} Preview
 * @typedef {{outcome?: string, cycles?: number, per_cycle?: Cycle[], cost_usd?: number|null,
 *            usage?: {[key: string]: unknown}}} Subagent
 * @typedef {{op: "insert"|"edit"|"run"|"delete"|"move", cell_id: string, index?: number,
 *            before?: string, after?: string, from?: number, ran?: boolean}} CellChange
 * @typedef {{name?: string, summary?: string}} NameSummary
 * @typedef {{created?: NameSummary[], changed?: NameSummary[], rebound?: NameSummary[],
 *            deleted?: string[]}} NamespaceState
 * @typedef {{same?: boolean, saved?: string}} ReplayCheck
 * @typedef {EventBase & {kind: "tool_call_response", call_id: string, content: string,
 *            status?: "done"|"error"|"cancelled"|"skipped"|"timeout", is_error?: boolean,
 *            elapsed?: number|null, images?: ImageData[], decisions?: Decision[],
 *            preview?: Preview, subagent?: Subagent, cell?: CellChange,
 *            outputs?: {output_type?: string, [key: string]: unknown}[],
 *            state?: NamespaceState, replay?: ReplayCheck, builtin?: boolean}}
 *            ToolCallResponseEvent
 *   builtin: the call went to the kernel's built-in tool of its name (false: another tool,
 *   a notebook's own of the same name too; absent: saved before it was written)
 * @typedef {EventBase & {kind: "inquiry_request", call_id: string, inquiry_id: string,
 *            question: string, choices?: string[]|null}} InquiryRequestEvent
 * @typedef {EventBase & {kind: "inquiry_response", call_id: string, inquiry_id: string,
 *            answer: string|null, by?: string}} InquiryResponseEvent
 * @typedef {EventBase & {kind: "notice", text: string, level?: string, data?: unknown}}
 *            NoticeEvent
 * @typedef {EventBase & {kind: "undo", call_id: string, tool: string, by?: string,
 *            done?: string[], not_undone?: string[], who?: Who}} UndoEvent
 * @typedef {EventBase & {kind: "rewind", requests: string[], turn: number, by?: string,
 *            done?: string[], not_undone?: string[], who?: Who}} RewindEvent
 *   requests: the rewound turns' request ids; turn: the number of the first in its thread
 * @typedef {EventBase & {kind: "review", kept: string[], by?: string, who?: Who}} ReviewEvent
 *   kept: the call ids of the changes a review panel's Keep (all) kept (--edits review)
 * @typedef {EventBase & {kind: "error", message: string, error_type?: string}} ErrorEvent
 * @typedef {ChatRequestEvent | ReasoningEvent | MessageEvent | BlockEvent | ToolCallRequestEvent
 *           | ToolCallResponseEvent | InquiryRequestEvent | InquiryResponseEvent | NoticeEvent
 *           | UndoEvent | RewindEvent | ReviewEvent | ErrorEvent} ConvEvent
 * @typedef {"waiting"|"running"|"done"|"error"|"cancelled"|"skipped"|"timeout"} ToolState
 * @typedef {{status: ToolState, started_at?: number|null, ended_at?: number|null,
 *            progress?: string[], progress_head?: number, progress_total?: number}} LiveTool
 *   progress: the kept output lines (the first progress_head are the head, the rest the tail)
 *   of progress_total printed
 * @typedef {{id: string, type: string, call_id?: string, builtin?: true,
 *            [field: string]: any}} Prompt
 *   builtin: an approval of one of the kernel's built-in tools (only they carry it): drawn
 *   with that built-in's form (live/prompt-forms.js); without it, every argument as it is;
 *   asker: who asks, when not the thread's model (a terminal agent through %chat serve:
 *   "Claude Code · call 7"), shown above the form
 * @typedef {{attempt: number, max_attempts: number, delay_s: number, reason?: string|null,
 *            until: number}} Retry
 * @typedef {{state: string, retry: Retry|null}} Status
 * @typedef {{input_tokens?: number, output_tokens?: number, cache_read_input_tokens?: number,
 *            cache_creation_input_tokens?: number, cache_creation_1h_input_tokens?: number,
 *            cost_usd?: number|null,
 *            context?: {used: number|null, window: number|null}}} Usage
 *   cache_creation_1h_input_tokens: of the cache writes, those kept an hour
 *   context: the gauge, the context in use after the last response against the model's window
 * @typedef {{reasoning?: string, thread?: string, model?: string, endpoint?: string,
 *            serve?: boolean}} Settings
 *   serve: the widget of a `%chat serve` session (live for long: its cards get Undo at once)
 * @typedef {(msg: import("./messages.js").PageMessage) => void} Send
 *
 * The subset of the anywidget model the view uses.
 * @typedef {{
 *   get(name: string): any,
 *   on(name: string, cb: (...args: any[]) => void): void,
 *   off(name?: string | null, cb?: ((...args: any[]) => void) | null): void,
 *   send(content: import("./messages.js").PageMessage): void,
 * }} Model
 */
export {};
