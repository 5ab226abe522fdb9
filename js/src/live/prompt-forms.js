/**
 * The forms of the prompt kinds: what each shows and which message each control sends.
 * A builder fills the prompt element and returns its primary action (the Enter key), if any.
 *
 * An approval is drawn by what the tool is, never by its name alone: the kernel's built-in cell
 * tools (the prompt says `builtin: true`, which only the kernel's own tools carry) get their
 * own forms, every other tool — a notebook's `@tool run_cell` too — the form that shows all of
 * its arguments. A built-in's form shows every argument it does not draw itself (`undrawn`):
 * no approval hides what will run.
 */
import { append, contentText, h, prettyJson } from "../util/dom.js";
import { cellPlace } from "../util/places.js";
import { CELL_TOOLS, STEP_TOOLS, callPreview, copyText } from "../render/cells.js";
import { codeArguments, renderArguments } from "../render/codeargs.js";
import { parseArguments, validate } from "../util/schema.js";

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
    if (typeof prompt.asker === "string" && prompt.asker) {
      // a terminal agent's call (%chat serve): whose it is, before what it would do
      add(el, h("div", { class: "jt-prompt-asker" }, `${prompt.asker} wants to:`));
    }
    const builtin = prompt.builtin === true;
    if (builtin && CELL_TOOLS.has(String(prompt.name))) return cellApproval(prompt, el, act);
    if (builtin && STEP_TOOLS.has(String(prompt.name))) return stepApproval(prompt, el, act);
    const args = prompt.arguments ?? {};
    const approve = () => act({ type: "approval", action: "approved" });
    const editor = argumentsEditor(prompt, (edited) =>
      act({ type: "approval", action: "edited", arguments: edited }),
    );
    editor.hidden = !prompt.edit_first;
    add(
      el,
      title("Run ", h("code", null, String(prompt.name ?? "tool")), "?"),
      h(
        "div",
        { class: "jt-prompt-args" },
        renderArguments(String(prompt.name), /** @type {Record<string, unknown>} */ (args)),
      ),
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
  const below = typeof args.after === "number" ? cellPlace(args.after) : "the chat";
  const what = inserting
    ? `${args.run && args.cell_type !== "markdown" ? "Insert and run" : "Insert"} a ${args.cell_type === "markdown" ? "markdown" : "code"} cell below ${below}?`
    : `${args.run ? "Edit and run" : "Edit"} ${cellPlace(args.index)}?`;
  const copy = button("Copy", () => copyText(source, copy));
  add(
    el,
    title(what),
    h("div", { class: "jt-cell-preview" }, callPreview(String(prompt.name), args, prompt.preview)),
    undrawn(prompt),
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
 * A `run_cell` / `delete_cell` / `move_cell` approval: what it does to which cell, the cell
 * as the kernel read it live (and a deletion's outputs), one button that does it, and Skip.
 * @type {Builder}
 */
function stepApproval(prompt, el, act) {
  const args = /** @type {Record<string, unknown>} */ (prompt.arguments ?? {});
  const cell = cellPlace(args.index);
  const [what, label] =
    prompt.name === "run_cell"
      ? [`Run ${cell}?`, "Run cell"]
      : prompt.name === "delete_cell"
        ? [`Delete ${cell}?`, "Delete cell"]
        : [`Move ${cell} to be ${cellPlace(args.to)}?`, "Move cell"];
  const approve = () => act({ type: "approval", action: "approved" });
  add(
    el,
    title(what),
    h("div", { class: "jt-cell-preview" }, callPreview(String(prompt.name), args, prompt.preview)),
    undrawn(prompt),
    prompt.error ? h("div", { class: "jt-prompt-error" }, String(prompt.error)) : null,
    actions(
      button(label, approve, "primary"),
      button("Skip", () => act({ type: "approval", action: "skipped" })),
    ),
  );
  return approve;
}

/** The arguments each built-in's own form draws (in its title and its preview). */
const DRAWN = /** @type {Readonly<Record<string, readonly string[]>>} */ ({
  insert_cell: ["source", "cell_type", "after", "run"],
  edit_cell: ["index", "source", "run"],
  run_cell: ["index"],
  delete_cell: ["index"],
  move_cell: ["index", "to"],
});

/**
 * The arguments of a built-in's call that its form does not draw, as JSON under "Other
 * arguments" (null when it draws them all): whatever goes with the call is shown.
 * @param {Prompt} prompt
 * @returns {HTMLElement | null}
 */
function undrawn(prompt) {
  const name = String(prompt.name);
  const drawn = Object.hasOwn(DRAWN, name) ? DRAWN[name] : [];
  const args = /** @type {Record<string, unknown>} */ (prompt.arguments ?? {});
  const rest = Object.entries(args).filter(([key]) => !drawn.includes(key));
  if (!rest.length) return null;
  return h(
    "div",
    { class: "jt-prompt-args jt-undrawn-args" },
    h("div", { class: "jt-arg-name" }, "Other arguments"),
    h("pre", { class: "jt-args-json" }, prettyJson(Object.fromEntries(rest))),
  );
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
 * The argument editor: each code argument (codeargs.js) in its own text area, holding the
 * exact text that will run, and the other arguments as JSON (its area left out when the call
 * has none and the schema names none). "Run with these arguments" sends exactly what is in
 * the areas, once it validates against the schema.
 * @param {Prompt} prompt
 * @param {(args: Record<string, unknown>) => void} submit
 */
function argumentsEditor(prompt, submit) {
  const args = /** @type {Record<string, unknown>} */ (prompt.arguments ?? {});
  const code = codeArguments(String(prompt.name), args);
  const codeAreas = code.map(([key, text]) => codeArea(key, text));
  const names = new Set(code.map(([key]) => key));
  const rest = Object.fromEntries(Object.entries(args).filter(([key]) => !names.has(key)));
  const restArea = h("textarea", {
    class: "jt-textarea jt-json",
    "data-role": "arguments",
    rows: code.length ? "4" : "8",
    spellcheck: "false",
  });
  restArea.value = prettyJson(rest);
  const restShown = !code.length || Object.keys(rest).length > 0 || otherFields(prompt, names);
  const collect = () => {
    const parsed = parseArguments(restShown ? restArea.value : "{}", null);
    if (!parsed.ok) return parsed;
    const value = {
      ...parsed.value,
      ...Object.fromEntries(codeAreas.map(([k, a]) => [k, a.value])),
    };
    const errors = validate(value, prompt.schema, "arguments");
    return errors.length ? { ok: false, errors } : { ok: true, value };
  };
  const problems = h("div", { class: "jt-validation", "aria-live": "polite" });
  const run = button(
    "Run with these arguments",
    () => {
      const parsed = collect();
      if (parsed.ok) submit(/** @type {Record<string, unknown>} */ (parsed.value));
    },
    "primary",
  );
  const check = () => {
    const parsed = collect();
    problems.textContent = parsed.ok ? "" : (parsed.errors ?? []).join("\n");
    run.disabled = !parsed.ok;
  };
  const areas = [
    ...codeAreas.map(([key, area]) => labelled(key, area)),
    restShown ? restArea : null,
  ];
  for (const area of [...codeAreas.map(([, a]) => a), restArea]) {
    area.addEventListener("input", check);
    area.addEventListener("keydown", (e) =>
      submitOnCtrlEnter(e, () => run.disabled || run.click()),
    );
  }
  check();
  return h("div", { class: "jt-editor" }, ...areas, problems, actions(run));
}

/**
 * A code argument's text area, holding its exact text.
 * @param {string} key the argument's name
 * @param {string} text
 * @returns {[string, HTMLTextAreaElement]}
 */
function codeArea(key, text) {
  const area = h("textarea", {
    class: "jt-textarea jt-code-input",
    "data-role": `code-arg:${key}`,
    "aria-label": key,
    rows: String(Math.min(16, Math.max(4, text.split("\n").length + 1))),
    spellcheck: "false",
  });
  area.value = text;
  return [key, area];
}

/**
 * Whether the tool's schema names arguments other than `names` (the JSON area is then shown).
 * @param {Prompt} prompt
 * @param {Set<string>} names
 */
function otherFields(prompt, names) {
  const schema = /** @type {{properties?: Record<string, unknown>} | null} */ (prompt.schema);
  return Object.keys(schema?.properties ?? {}).some((key) => !names.has(key));
}

/**
 * @param {string} name
 * @param {HTMLTextAreaElement} area
 */
function labelled(name, area) {
  return h("label", { class: "jt-code-arg" }, h("div", { class: "jt-arg-name" }, name), area);
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
