/**
 * A cell named by its place, as a person counts cells: "the 4th cell" for index 3. Brackets
 * are kept for what Jupyter shows beside a cell, its execution count `[19]` (docs/reading.md,
 * "How cells are named"); the tools' 0-based index is never shown in them. The kernel's twin
 * is cell_place in jupyter_turns/reading/cells.py (which adds the index, for the model).
 */

/**
 * `1st`, `2nd`, `3rd`, `4th`, `11th`, `12th`, `13th`, `21st`.
 * @param {number} number
 * @returns {string}
 */
export function ordinal(number) {
  const tens = number % 100;
  const ones = number % 10;
  const suffix =
    tens >= 11 && tens <= 13
      ? "th"
      : ones === 1
        ? "st"
        : ones === 2
          ? "nd"
          : ones === 3
            ? "rd"
            : "th";
  return `${number}${suffix}`;
}

/**
 * "the 4th cell" for the 0-based index 3 ("a cell" for what is not an index).
 * @param {unknown} index
 * @returns {string}
 */
export function cellPlace(index) {
  const n = Number(index);
  return Number.isInteger(n) && n >= 0 ? `the ${ordinal(n + 1)} cell` : "a cell";
}
