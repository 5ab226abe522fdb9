/**
 * The custom messages between the kernel's ChatWidget and this page, both ways (JSDoc only;
 * nothing runs here). jupyter_turns/messages.py declares the same messages as TypedDicts, with
 * the same names, kinds and fields; tests/unit/test_messages.py compares the two lists, so
 * keep every message on one `@typedef {{...}} Name` below.
 *
 * Kernel → page, the live tail: `delta` appends text to draft blocks (answer text, reasoning,
 * or a tool call's arguments as the model writes them: kind "tool_input", whose parts also name
 * the tool and the call), `released` hands draft blocks over to the events that replace them
 * (a null event id drops the block; a call's card replaces its draft card), `draft`
 * replaces the streaming blocks (after a view's `ready`), `draft_clear` drops the whole draft
 * (Abort), `progress` brings new output lines of running tools. The draft messages of a running
 * sub-agent carry `parent`: the call id whose card draws that draft (its own block indexes).
 *
 * Page → kernel, every user action (never a trait write): `ready` from every render, each
 * prompt's answer under the prompt's own kind (the budget pause's too) — its `action` is the name the decision is saved
 * under — and `interrupt_request`: `action: "stop"` from the Stop button (one click stops),
 * none from the options button beside it or Esc (the kernel opens the interrupt menu). Every
 * answer and Stop carries `who`, the page's current user (live/who.js): a label the kernel
 * sanitizes and saves with the decision, never a permission.
 *
 * @typedef {[number, "message" | "reasoning", string]} TextPart  [block index, kind, text]
 * @typedef {[number, "tool_input", string, string, string]} ToolInputPart
 *   [block index, "tool_input", argument text, tool name, call id]
 * @typedef {TextPart | ToolInputPart} DraftPart
 * @typedef {{head: number, from: number, total: number, runs: [number, string[]][]}} ProgressUpdate
 *   head: how many lines (numbered from 0) the kernel keeps as the head; from: the first tail
 *   line it still keeps; total: lines printed so far; runs: [first line number, lines].
 *
 * @typedef {{type: "delta", parts: DraftPart[], parent?: string}} DeltaMsg
 * @typedef {{type: "draft", blocks: DraftPart[], parent?: string}} DraftMsg
 * @typedef {{type: "released", blocks: [number, string | null][], parent?: string}} ReleasedMsg
 * @typedef {{type: "draft_clear", parent?: string}} DraftClearMsg
 * @typedef {{type: "progress", tools: Record<string, ProgressUpdate>}} ProgressMsg
 *
 * @typedef {{name: string, username: string}} PageUser  who clicked, as this page knows them
 * @typedef {{type: "ready"}} ReadyMsg
 * @typedef {{type: "approval", prompt_id: string, action: "approved" | "skipped" | "edited" | "always_allowed", arguments?: Record<string, unknown>, who?: PageUser}} ApprovalMsg
 * @typedef {{type: "result", prompt_id: string, action: "delivered" | "withheld" | "result_edited", content?: string, who?: PageUser}} ResultMsg
 * @typedef {{type: "inquiry", prompt_id: string, answer: string, who?: PageUser}} InquiryMsg
 * @typedef {{type: "interrupt", prompt_id: string, action: "stop" | "abort" | "reply" | "continue" | "restart", text?: string, who?: PageUser}} InterruptMsg
 * @typedef {{type: "budget", prompt_id: string, action: "continue" | "stop", who?: PageUser}} BudgetMsg
 * @typedef {{type: "interrupt_request", action?: "stop", who?: PageUser}} InterruptRequestMsg
 *
 * @typedef {DeltaMsg | DraftMsg | ReleasedMsg | DraftClearMsg | ProgressMsg} KernelMessage
 * @typedef {ReadyMsg | ApprovalMsg | ResultMsg | InquiryMsg | InterruptMsg | BudgetMsg | InterruptRequestMsg} PageMessage
 * @typedef {Omit<ApprovalMsg, "prompt_id"> | Omit<ResultMsg, "prompt_id">
 *   | Omit<InquiryMsg, "prompt_id"> | Omit<InterruptMsg, "prompt_id">
 *   | Omit<BudgetMsg, "prompt_id">} PromptAction
 *   a prompt's answer before the prompt's id is added
 */
export {};
