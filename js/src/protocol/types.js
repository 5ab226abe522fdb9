/**
 * Shapes of the widget's synced traits (JSDoc only; nothing runs here). The custom messages
 * are in messages.js.
 *
 * @typedef {{kind: string, id: string, timestamp?: string, [field: string]: any}} ConvEvent
 * @typedef {"waiting"|"running"|"done"|"error"|"cancelled"|"skipped"|"timeout"} ToolState
 * @typedef {{status: ToolState, started_at?: number|null, ended_at?: number|null,
 *            progress?: string[], progress_head?: number, progress_total?: number}} LiveTool
 *   progress: the kept output lines (the first progress_head are the head, the rest the tail)
 *   of progress_total printed
 * @typedef {{id: string, type: string, call_id?: string, [field: string]: any}} Prompt
 * @typedef {{attempt: number, max_attempts: number, delay_s: number, reason?: string|null,
 *            until: number}} Retry
 * @typedef {{state: string, retry: Retry|null}} Status
 * @typedef {{input_tokens?: number, output_tokens?: number, cache_read_input_tokens?: number,
 *            cache_creation_input_tokens?: number, cost_usd?: number|null,
 *            context?: {used: number|null, window: number|null}}} Usage
 *   context: the gauge, the context in use after the last response against the model's window
 * @typedef {{reasoning?: string, thread?: string, model?: string, endpoint?: string}} Settings
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
