import assert from "node:assert/strict";
import { test } from "node:test";
import { IMAGE_TYPES, imageSrc } from "../src/render/images.js";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";

test("an image of an allowed type with base64 data becomes a data: URL", () => {
  assert.equal(imageSrc({ media_type: "image/png", data: PNG }), `data:image/png;base64,${PNG}`);
  for (const type of IMAGE_TYPES) {
    assert.equal(imageSrc({ media_type: type, data: "AAAA" }), `data:${type};base64,AAAA`);
  }
});

test("other types, non-base64 data and malformed images are not drawn", () => {
  for (const bad of [
    { media_type: "image/svg+xml", data: "PHN2Zz4=" },
    { media_type: "text/html", data: "AAAA" },
    { media_type: "IMAGE/PNG", data: "AAAA" },
    { media_type: "image/png", data: 'AAAA"onerror=alert(1)' },
    { media_type: "image/png", data: "data:image/png;base64,AAAA" },
    { media_type: "image/png", data: "AA AA" },
    { media_type: "image/png", data: "AAAA===" },
    { media_type: "image/png", data: "AAAA\n" },
    { media_type: "image/png" },
    { data: "AAAA" },
    "image/png",
    null,
    undefined,
  ]) {
    assert.equal(imageSrc(bad), null, JSON.stringify(bad));
  }
});
