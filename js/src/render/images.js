/**
 * Images the kernel saved with an event (a tool result's `images`, an attachment's `images`):
 * `{media_type, data, width?, height?, label?}`, `data` base64 without a `data:` prefix.
 *
 * An image is drawn only as a `data:` URL of one of four raster types, from data that is plain
 * base64; anything else becomes a muted note, so a record can never make the page load a remote
 * or scriptable source (no SVG). Attributes are set with setAttribute, never as HTML.
 */
import { h } from "../util/dom.js";

/**
 * @typedef {{media_type?: unknown, data?: unknown, width?: unknown, height?: unknown,
 *            label?: unknown}} ImageData
 */

export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const UNSUPPORTED = "[image not shown: unsupported]";

/**
 * The `data:` URL of an image that may be drawn, or null.
 * @param {unknown} image
 * @returns {string | null}
 */
export function imageSrc(image) {
  if (!image || typeof image !== "object") return null;
  const { media_type: type, data } = /** @type {ImageData} */ (image);
  if (typeof type !== "string" || !IMAGE_TYPES.includes(type)) return null;
  if (typeof data !== "string" || !BASE64.test(data)) return null;
  return `data:${type};base64,${data}`;
}

/**
 * A size attribute when the kernel knew it (a positive whole number of pixels).
 * @param {unknown} value
 */
function pixels(value) {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : null;
}

/**
 * One image, or the note that it is not shown.
 * @param {unknown} image
 * @returns {HTMLElement}
 */
export function renderImage(image) {
  const src = imageSrc(image);
  if (src === null) return h("span", { class: "jt-image-blocked jt-muted" }, UNSUPPORTED);
  const { label, width, height } = /** @type {ImageData} */ (image);
  return h("img", {
    class: "jt-image",
    src,
    alt: typeof label === "string" && label !== "" ? label : "image",
    width: pixels(width),
    height: pixels(height),
  });
}

/**
 * The images of a list (each one or its note), or null when there are none.
 * @param {unknown} images
 * @returns {HTMLElement | null}
 */
export function renderImages(images) {
  if (!Array.isArray(images) || images.length === 0) return null;
  return h("div", { class: "jt-images" }, images.map(renderImage));
}
