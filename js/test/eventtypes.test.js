import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

/**
 * The JSDoc typedefs of saved events (src/protocol/types.js) against the schema generated from
 * the kernel's models (docs/event-schema.json): tsc checks the renderers against the typedefs,
 * this test checks the typedefs against the schema, so a kind or field added on the Python side
 * cannot go undeclared in the front end.
 */
const schema = JSON.parse(
  readFileSync(new URL("../../docs/event-schema.json", import.meta.url), "utf8"),
);
const typesText = readFileSync(new URL("../src/protocol/types.js", import.meta.url), "utf8");

/** Every `@typedef {TYPE} Name` in a JSDoc text, TYPE with its comment stars removed. */
export function typedefs(text) {
  const body = text
    .split("\n")
    .map((line) => line.replace(/^\s*\/?\*+\/?\s?/, ""))
    .join("\n");
  const found = new Map();
  const marker = "@typedef {";
  for (let at = body.indexOf(marker); at !== -1; at = body.indexOf(marker, at + 1)) {
    const start = at + marker.length;
    const end = matching(body, start - 1);
    const name = body.slice(end + 1).match(/^\s*([A-Za-z_$][\w$]*)/)?.[1];
    if (name) found.set(name, body.slice(start, end));
  }
  return found;
}

/** The index of the brace closing the one at `open`. */
function matching(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0) return i;
  }
  throw new Error(`unbalanced braces from ${open}`);
}

/** The parts of `text` at brace depth 0 split on `sep` (`&`, `|`, `,`). */
function splitTop(text, sep) {
  const parts = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    if ("{[(<".includes(text[i])) depth++;
    else if ("}])>".includes(text[i])) depth--;
    else if (text[i] === sep && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts.map((part) => part.trim()).filter(Boolean);
}

/**
 * The fields of an object type: `{a: T, b?: U}` literals, named typedefs and `&` of them,
 * by name → {optional, type}; index signatures left out. Null when the type is no object.
 */
function fieldsOf(type, defs) {
  const fields = new Map();
  for (const part of splitTop(type, "&")) {
    if (defs.has(part)) {
      const inner = fieldsOf(defs.get(part), defs);
      if (!inner) return null;
      for (const [key, value] of inner) fields.set(key, value);
    } else if (part.startsWith("{") && part.endsWith("}")) {
      for (const entry of splitTop(part.slice(1, -1), ",")) {
        const m = entry.match(/^([A-Za-z_$][\w$]*)(\??)\s*:\s*([\s\S]*)$/);
        if (m) fields.set(m[1], { optional: m[2] === "?", type: m[3].trim() });
      }
    } else {
      return null;
    }
  }
  return fields;
}

/** A field's object type with `[]`, `| null` and `| undefined` taken off, for nested checks. */
function objectPart(type) {
  const kept = splitTop(type, "|").filter((part) => part !== "null" && part !== "undefined");
  if (kept.length !== 1) return null;
  return kept[0].endsWith("[]") ? kept[0].slice(0, -2) : kept[0];
}

/** A schema node with its `$ref` followed and, for a list, its items' schema. */
function resolve(node) {
  const ref = node?.$ref?.match(/^#\/\$defs\/(.+)$/)?.[1];
  if (ref) return resolve(schema.$defs[ref]);
  if (node?.type === "array") return resolve(node.items);
  return node;
}

/**
 * What the schema declares that the typedef `type` does not, as dotted paths: a missing
 * field, a required one marked optional, an optional one without a default marked required;
 * nested objects with declared properties are checked the same way.
 */
export function undeclared(node, type, defs, path) {
  const fields = fieldsOf(type, defs);
  if (!fields) return [`${path}: ${type} is not an object type`];
  const required = new Set(node.required ?? []);
  const problems = [];
  for (const [key, sub] of Object.entries(node.properties ?? {})) {
    const where = `${path}.${key}`;
    const field = fields.get(key);
    if (!field) {
      problems.push(`${where}: not declared`);
      continue;
    }
    if (required.has(key) && field.optional) problems.push(`${where}: required, marked optional`);
    const defaulted = "default" in sub || key === "id" || key === "kind";
    if (!required.has(key) && !defaulted && !field.optional) {
      problems.push(`${where}: optional, marked required`);
    }
    const inner = resolve(sub);
    const innerType = objectPart(field.type);
    if (inner?.properties && innerType) {
      problems.push(...undeclared(inner, innerType, defs, where));
    }
  }
  return problems;
}

/** Each saved event kind's schema, by kind. */
function schemaKinds() {
  const byKind = new Map();
  for (const def of Object.values(schema.$defs)) {
    const kind = def.properties?.kind?.const;
    if (kind) byKind.set(kind, def);
  }
  return byKind;
}

/** The members of the ConvEvent union, by the kind each declares. */
function typedKinds(defs) {
  const byKind = new Map();
  for (const member of splitTop(defs.get("ConvEvent") ?? "", "|")) {
    const kind = fieldsOf(defs.get(member) ?? "{}", defs)?.get("kind")?.type;
    byKind.set(kind?.match(/^"(.+)"$/)?.[1] ?? `${member}?`, member);
  }
  return byKind;
}

test("ConvEvent has one typedef per event kind the schema declares, and no other", () => {
  const defs = typedefs(typesText);
  assert.deepEqual([...typedKinds(defs).keys()].sort(), [...schemaKinds().keys()].sort());
});

test("every field the schema declares for an event kind is declared in its typedef", () => {
  const defs = typedefs(typesText);
  const typed = typedKinds(defs);
  const problems = [...schemaKinds()].flatMap(([kind, def]) =>
    typed.has(kind) ? undeclared(def, defs.get(typed.get(kind)), defs, kind) : [],
  );
  assert.deepEqual(problems, []);
});

test("the parser sees a field the typedef leaves out (the check can fail)", () => {
  const text = `/**
   * @typedef {{id: string, parent?: string, [extra: string]: unknown}} Base
   * @typedef {Base & {kind: "note", text: string}} NoteEvent
   */`;
  const defs = typedefs(text);
  const node = {
    properties: {
      kind: { const: "note" },
      id: { type: "string" },
      text: { type: "string" },
      level: { type: "string" },
      cell: { type: "object", properties: { op: { type: "string" } }, required: ["op"] },
    },
    required: ["text"],
  };
  assert.deepEqual(undeclared(node, defs.get("NoteEvent"), defs, "note"), [
    "note.level: not declared",
    "note.cell: not declared",
  ]);
});
