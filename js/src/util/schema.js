/**
 * Check edited tool arguments against the tool's JSON schema before they can be sent.
 *
 * A deliberately small subset — `type` (incl. lists of types), `required`, `properties`,
 * `additionalProperties: false`, `items`, `enum`, `const`, `anyOf`/`oneOf` — enough to catch
 * the mistakes of a hand edit. The kernel validates again with the full schema and reopens
 * the prompt with `error` set if it disagrees.
 */

/**
 * Parse and validate; returns the parsed value or the problems found.
 * @param {string} text
 * @param {unknown} schema
 * @returns {{ok: true, value: Record<string, unknown>} | {ok: false, errors: string[]}}
 */
export function parseArguments(text, schema) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, errors: [`not valid JSON: ${/** @type {Error} */ (err).message}`] };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, errors: ["arguments must be a JSON object"] };
  }
  const errors = validate(value, schema, "arguments");
  return errors.length ? { ok: false, errors } : { ok: true, value };
}

/**
 * @param {unknown} value
 * @param {unknown} schema
 * @param {string} path
 * @returns {string[]}
 */
export function validate(value, schema, path) {
  if (typeof schema !== "object" || schema === null) return [];
  const s = /** @type {Record<string, any>} */ (schema);
  /** @type {string[]} */
  const errors = [];

  for (const key of ["anyOf", "oneOf"]) {
    if (Array.isArray(s[key]) && s[key].length) {
      const fits = s[key].some(
        (/** @type {unknown} */ sub) => validate(value, sub, path).length === 0,
      );
      if (!fits) errors.push(`${path}: does not match any allowed form`);
    }
  }
  if ("const" in s && JSON.stringify(s.const) !== JSON.stringify(value)) {
    errors.push(`${path}: must be ${JSON.stringify(s.const)}`);
  }
  if (
    Array.isArray(s.enum) &&
    !s.enum.some((/** @type {unknown} */ e) => JSON.stringify(e) === JSON.stringify(value))
  ) {
    errors.push(
      `${path}: must be one of ${s.enum.map((/** @type {unknown} */ e) => JSON.stringify(e)).join(", ")}`,
    );
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((/** @type {string} */ t) => hasType(value, t))) {
      errors.push(`${path}: expected ${types.join(" or ")}, got ${typeName(value)}`);
      return errors;
    }
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const obj = /** @type {Record<string, unknown>} */ (value);
    for (const name of Array.isArray(s.required) ? s.required : []) {
      if (!(name in obj)) errors.push(`${path}: missing required "${name}"`);
    }
    const props = typeof s.properties === "object" && s.properties ? s.properties : {};
    for (const [name, sub] of Object.entries(obj)) {
      if (name in props) errors.push(...validate(sub, props[name], `${path}.${name}`));
      else if (s.additionalProperties === false) errors.push(`${path}: unexpected "${name}"`);
      else if (typeof s.additionalProperties === "object") {
        errors.push(...validate(sub, s.additionalProperties, `${path}.${name}`));
      }
    }
  }
  if (Array.isArray(value) && typeof s.items === "object" && s.items !== null) {
    value.forEach((item, i) => errors.push(...validate(item, s.items, `${path}[${i}]`)));
  }
  return errors;
}

/**
 * @param {unknown} value
 * @param {string} type
 */
function hasType(value, type) {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "null":
      return value === null;
    case "array":
      return Array.isArray(value);
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    default:
      return true;
  }
}

/** @param {unknown} value */
function typeName(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
