/**
 * The forms of the prompt kinds: what each shows and which message each control sends.
 * A builder fills the prompt element and returns its primary action (the Enter key), if any.
 */
import { append, contentText, h, prettyJson } from "../util/dom.js";
import { CELL_TOOLS, callPreview, copyText } from "../render/cells.js";
import { parseArguments } from "../util/schema.js";

/** @typedef {import("../protocol/types.js").Prompt} Prompt */
/** @typedef {import("../protocol/messages.js").PromptAction} PromptAction */

/**
 * @callback Builder
 * @param {Prompt} prompt
 * @param {HTMLElement} el
 * @param {(msg: PromptAction) => void} act
 * @returns {(() => void) | null} the primary action (Enter)
 */

/** @type {Record<string, Builder>} */
export const BUILDERS = {
  approval(prompt, el, act) {
    if (CELL_TOOLS.has(String(prompt.name))) return cellApproval(prompt, el, act);
    const approve = () => act({ type: "approval", action: "approved" });
    const editor = argumentsEditor(prompt, (args) =>
      act({ type: "approval", action: "edited", arguments: args }),
    );
    editor.hidden = !prompt.edit_first;
    add(
      el,
      title("Run ", h("code", null, String(prompt.name ?? "tool")), "?"),
      h("pre", { class: "jt-prompt-args" }, prettyJson(prompt.arguments ?? {})),
      prompt.error ? h("div", { class: "jt-prompt-error" }, String(prompt.error)) : null,
      actions(
        button("Approve", approve, "primary"),
        button("Skip", () => act({ type: "approval", action: "skipped" })),
        button("Edit arguments", () => {
          editor.hidden = false;
          editor.querySelector("textarea")?.focus();
        }),
        button("Always allow this tool in this thread", () =>
          act({ type: "approval", action: "always_allowed" }),
        ),
      ),
      editor,
    );
    return approve;
  },

  result(prompt, el, act) {
    const deliver = () => act({ type: "result", action: "delivered" });
    const text = contentText(prompt.content);
    const area = h("textarea", {
      class: "jt-textarea",
      "data-role": "result",
      rows: "8",
      spellcheck: "false",
    });
    area.value = text;
    const editor = h(
      "div",
      { class: "jt-editor", hidden: true },
      area,
      actions(
        button(
          "Deliver edited result",
          () => act({ type: "result", action: "result_edited", content: area.value }),
          "primary",
        ),
      ),
    );
    add(
      el,
      title(
        "Deliver the ",
        prompt.is_error ? "error" : "result",
        " of ",
        h("code", null, String(prompt.name ?? "tool")),
        " to the model?",
      ),
      h("pre", { class: `jt-prompt-content${prompt.is_error ? " jt-result-error" : ""}` }, text),
      actions(
        button("Deliver", deliver, "primary"),
        button("Don't deliver", () => act({ type: "result", action: "withheld" })),
        button("Edit", () => {
          editor.hidden = false;
          area.focus();
        }),
      ),
      editor,
    );
    return deliver;
  },

  inquiry(prompt, el, act) {
    add(el, title(String(prompt.question ?? "The tool asks:")));
    if (Array.isArray(prompt.choices) && prompt.choices.length) {
      add(
        el,
        actions(
          ...prompt.choices.map((choice) =>
            button(contentText(choice), () => act({ type: "inquiry", answer: choice })),
          ),
        ),
      );
      return null;
    }
    const area = h("textarea", {
      class: "jt-textarea",
      "data-role": "answer",
      rows: "2",
      placeholder: "Your answer (Ctrl+Enter to send)",
    });
    const send = () => act({ type: "inquiry", answer: area.value });
    area.addEventListener("keydown", (e) => submitOnCtrlEnter(e, send));
    add(el, area, actions(button("Answer", send, "primary")));
    return null;
  },

  budget(prompt, el, act) {
    const go = () => act({ type: "budget", action: "continue" });
    add(
      el,
      title(prompt.scope === "session" ? "Session budget reached" : "Turn budget reached"),
      h("div", { class: "jt-budget-text" }, String(prompt.text ?? "")),
      actions(
        button("Continue", go, "primary", "Allow one more budget's worth"),
        button("Stop", () => act({ type: "budget", action: "stop" }), "danger", "End the turn"),
      ),
    );
    return go;
  },

  interrupt(prompt, el, act) {
    /** @param {import("../protocol/messages.js").InterruptMsg["action"]} action */
    const menu = (action) => () => act({ type: "interrupt", action });
    if (prompt.context === "tool") {
      add(
        el,
        title("Interrupted while tools run"),
        reason(prompt),
        actions(
          button("Stop", menu("stop"), "danger", "Cancel the running tools"),
          button("Restart", menu("restart"), null, "Cancel and run the tools again"),
          button("Continue", menu("continue"), "primary", "Keep waiting"),
        ),
      );
      return null;
    }
    const area = h("textarea", {
      class: "jt-textarea",
      "data-role": "reply",
      rows: "2",
      placeholder: "Reply instead (Ctrl+Enter to send)",
    });
    const reply = () => {
      if (area.value.trim()) act({ type: "interrupt", action: "reply", text: area.value });
    };
    area.addEventListener("keydown", (e) => submitOnCtrlEnter(e, reply));
    add(
      el,
      title("Interrupted"),
      reason(prompt),
      prompt.stream_alive === false
        ? h(
            "div",
            { class: "jt-muted" },
            "The stream has ended; Continue asks the model to resume from here.",
          )
        : null,
      actions(
        button("Stop", menu("stop"), null, "Keep what arrived and end the turn"),
        button("Abort", menu("abort"), "danger", "Discard this cycle"),
        button("Continue", menu("continue"), "primary", "Resume the answer"),
      ),
      h("div", { class: "jt-reply" }, area, button("Reply", reply)),
    );
    return null;
  },
};

/**
 * An `insert_cell` / `edit_cell` approval: the cell as it will look (or the diff), and Edit
 * changes the cell's text rather than raw JSON arguments.
 * @type {Builder}
 */
function cellApproval(prompt, el, act) {
  const args = /** @type {Record<string, unknown>} */ (prompt.arguments ?? {});
  const inserting = prompt.name === "insert_cell";
  const source = typeof args.source === "string" ? args.source : "";
  const approve = () => act({ type: "approval", action: "approved" });
  const area = h("textarea", {
    class: "jt-textarea jt-code-input",
    "data-role": "cell-source",
    rows: String(Math.min(16, Math.max(4, source.split("\n").length + 1))),
    spellcheck: "false",
  });
  area.value = source;
  const send = () =>
    act({ type: "approval", action: "edited", arguments: { ...args, source: area.value } });
  area.addEventListener("keydown", (e) => submitOnCtrlEnter(e, send));
  const editor = h(
    "div",
    { class: "jt-editor", hidden: !prompt.edit_first },
    area,
    actions(button(inserting ? "Insert this text" : "Use this text", send, "primary")),
  );
  const what = inserting
    ? `${args.run && args.cell_type !== "markdown" ? "Insert and run" : "Insert"} a ${args.cell_type === "markdown" ? "markdown" : "code"} cell below the chat?`
    : `Edit cell [${Number(args.index)}]?`;
  const copy = button("Copy", () => copyText(source, copy));
  add(
    el,
    title(what),
    h("div", { class: "jt-cell-preview" }, callPreview(String(prompt.name), args, prompt.preview)),
    prompt.error ? h("div", { class: "jt-prompt-error" }, String(prompt.error)) : null,
    actions(
      button(inserting ? "Insert" : "Apply edit", approve, "primary"),
      button("Skip", () => act({ type: "approval", action: "skipped" })),
      button("Edit", () => {
        editor.hidden = false;
        area.focus();
      }),
      inserting ? copy : null,
    ),
    editor,
  );
  return approve;
}

/**
 * @param {HTMLElement} el
 * @param {...import("../util/dom.js").Child} children
 */
function add(el, ...children) {
  append(el, children);
}

/** @type {Builder} */
export function buildUnknown(prompt, el) {
  add(el, h("div", { class: "jt-muted" }, `unsupported prompt: ${String(prompt.type)}`));
  return null;
}

/**
 * @param {Prompt} prompt
 * @param {(args: Record<string, unknown>) => void} submit
 */
function argumentsEditor(prompt, submit) {
  const area = h("textarea", {
    class: "jt-textarea jt-json",
    "data-role": "arguments",
    rows: "8",
    spellcheck: "false",
  });
  area.value = prettyJson(prompt.arguments ?? {});
  const problems = h("div", { class: "jt-validation", "aria-live": "polite" });
  const run = button(
    "Run with these arguments",
    () => {
      const parsed = parseArguments(area.value, prompt.schema);
      if (parsed.ok) submit(parsed.value);
    },
    "primary",
  );
  const check = () => {
    const parsed = parseArguments(area.value, prompt.schema);
    problems.textContent = parsed.ok ? "" : parsed.errors.join("\n");
    run.disabled = !parsed.ok;
  };
  area.addEventListener("input", check);
  area.addEventListener("keydown", (e) => submitOnCtrlEnter(e, () => run.disabled || run.click()));
  check();
  return h("div", { class: "jt-editor" }, area, problems, actions(run));
}

/**
 * @param {KeyboardEvent} event
 * @param {() => void} submit
 */
function submitOnCtrlEnter(event, submit) {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    submit();
  }
}

/**
 * @param {string} label
 * @param {() => void} onClick
 * @param {string | null} [variant] "primary" | "danger"
 * @param {string} [tip]
 */
function button(label, onClick, variant, tip) {
  return h(
    "button",
    {
      type: "button",
      class: `jt-button${variant ? ` jt-${variant}` : ""}`,
      title: tip ?? null,
      onclick: () => onClick(),
    },
    label,
  );
}

/** @param {...(string | Node)} parts */
function title(...parts) {
  return h("div", { class: "jt-prompt-title" }, ...parts);
}

/** @param {...(HTMLElement | null)} buttons */
function actions(...buttons) {
  return h("div", { class: "jt-actions" }, ...buttons);
}

/** @param {Prompt} prompt */
function reason(prompt) {
  return prompt.reason ? h("div", { class: "jt-muted" }, String(prompt.reason)) : null;
}
