"""Images the model can see: bytes, base64 outputs and Python objects as :class:`ImageData`.

Every image goes through :func:`image_from_bytes`, which checks the magic bytes (the only
formats the API takes are PNG, JPEG, GIF and WebP), reads the size from the header where that
is simple, and downscales with Pillow when the long side exceeds :data:`MAX_SIDE`: the API
shrinks larger images anyway, so sending them only costs upload time and tokens. An image that
is small enough is passed on byte for byte, without decoding it.

:func:`image_of` turns a notebook value into an image (a matplotlib figure, a PIL image, an
``IPython.display.Image``, image bytes, anything with ``_repr_png_``/``_repr_jpeg_``). It reads
values the user made, so it never raises: a broken object is simply not an image.

It sits in the model beside :class:`ImageData` because every layer above makes images: a tool's
return value (:mod:`jupyter_turns.tools.results`), an MCP result, the ``python`` tool's
figures, and what the notebook reader and ``@name`` attachments see. Nothing here reads IPython:
its ``Image`` class is recognised only if the user already imported it.
"""

from __future__ import annotations

import base64
import binascii
import io
import sys
from typing import TYPE_CHECKING, Any, Literal, cast

from .content import ImageData

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

__all__ = [
    "MAX_SIDE",
    "base64_size",
    "image_from_base64",
    "image_from_bytes",
    "image_of",
]

MAX_SIDE = 1568  # the API's useful long side: larger images are scaled down before the model

_Kind = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
_PNG = b"\x89PNG\r\n\x1a\n"
# JPEG start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) share the range
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_PNG_MODES = frozenset({"1", "L", "LA", "P", "RGB", "RGBA", "I;16"})


def _sniff(data: bytes) -> _Kind | None:
    if data.startswith(_PNG):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from the first start-of-frame segment, walking the segment list."""
    i = 2
    while i + 4 <= len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte before a marker
            i += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # markers without a length
            i += 2
            continue
        if marker in (0xD9, 0xDA):  # end of image or start of scan: no frame header seen
            return None
        if marker in _SOF and i + 9 <= len(data):
            height = int.from_bytes(data[i + 5 : i + 7], "big")
            width = int.from_bytes(data[i + 7 : i + 9], "big")
            return (width, height) if width and height else None
        i += 2 + int.from_bytes(data[i + 2 : i + 4], "big")
    return None


def _header_size(data: bytes, kind: _Kind) -> tuple[int, int] | None:
    """The size from the header for PNG, GIF and JPEG; ``None`` means ask Pillow."""
    if kind == "image/png" and len(data) >= 24 and data[12:16] == b"IHDR":
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if kind == "image/gif" and len(data) >= 10:
        return int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    if kind == "image/jpeg":
        return _jpeg_size(data)
    return None


def _fit(width: int, height: int) -> tuple[int, int]:
    """The size with the long side at :data:`MAX_SIDE`, the aspect ratio kept."""
    scale = MAX_SIDE / max(width, height)
    if width >= height:
        return MAX_SIDE, max(1, round(height * scale))
    return max(1, round(width * scale)), MAX_SIDE


def _encode(image: PILImage, kind: _Kind, label: str) -> ImageData:
    """``image`` as PNG, or as JPEG when ``kind`` is JPEG, downscaled to :data:`MAX_SIDE`."""
    from PIL import Image

    fmt: _Kind = "image/jpeg" if kind == "image/jpeg" else "image/png"
    if max(image.size) > MAX_SIDE:
        # resizing a palette or 1-bit image falls back to nearest-neighbour: convert first
        if image.mode not in ("RGB", "RGBA", "L", "LA", "CMYK"):
            image = image.convert("RGBA" if "A" in image.getbands() or image.mode == "P" else "RGB")
        image = image.resize(_fit(*image.size), Image.Resampling.LANCZOS)
    if fmt == "image/jpeg" and image.mode not in ("RGB", "L", "CMYK"):
        image = image.convert("RGB")
    if fmt == "image/png" and image.mode not in _PNG_MODES:
        image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
    out = io.BytesIO()
    if fmt == "image/jpeg":
        image.save(out, format="JPEG", quality=90)
    else:
        image.save(out, format="PNG", optimize=False)
    encoded = base64.b64encode(out.getvalue()).decode("ascii")
    width, height = image.size
    return ImageData(media_type=fmt, data=encoded, width=width, height=height, label=label)


def image_from_bytes(
    data: bytes, media_type: str | None = None, label: str = ""
) -> ImageData | None:
    """``data`` as an image no larger than :data:`MAX_SIDE`, or ``None`` if it is not one.

    The magic bytes decide the format; ``media_type`` is only a caller's hint and loses when
    it disagrees (notebook outputs and file names are sometimes wrong). A downscaled PNG or
    JPEG keeps its format; a downscaled GIF (first frame) or WebP becomes PNG. Bytes that look
    like an image but cannot be decoded when they have to be are ``None`` too.
    """
    del media_type  # accepted so callers can pass what they know; the bytes are the truth
    kind = _sniff(data)
    if kind is None:
        return None
    size = _header_size(data, kind)
    if size is not None and max(size) <= MAX_SIDE:
        encoded = base64.b64encode(data).decode("ascii")
        return ImageData(media_type=kind, data=encoded, width=size[0], height=size[1], label=label)
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            if max(image.size) <= MAX_SIDE:  # only WebP (or an odd header) gets here
                encoded = base64.b64encode(data).decode("ascii")
                width, height = image.size
                return ImageData(
                    media_type=kind, data=encoded, width=width, height=height, label=label
                )
            if kind == "image/jpeg":
                image.draft(None, _fit(*image.size))  # decode at a reduced scale: much faster
            return _encode(image, kind, label)
    # Pillow's decoders signal a damaged file with OSError, SyntaxError, EOFError,
    # struct.error or DecompressionBombError, among others: all mean "not an image we can use"
    except Exception:
        return None


def image_from_base64(text: str, media_type: str, label: str = "") -> ImageData | None:
    """An nbformat output's base64 image (newlines allowed, or a ``data:`` URL) as an image."""
    if text.startswith("data:") and "," in text:
        text = text.split(",", 1)[1]
    try:
        data = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        return None
    return image_from_bytes(data, media_type, label)


def base64_size(text: str) -> tuple[int, int] | None:
    """A PNG's or GIF's size from the start of its base64 text, without decoding the rest."""
    head = "".join(text[:64].split())[:32]
    try:
        data = base64.b64decode(head[: len(head) - len(head) % 4])
    except (binascii.Error, ValueError):
        return None
    kind = _sniff(data)
    return _header_size(data, kind) if kind in ("image/png", "image/gif") else None


def _loaded_class(module: str, name: str) -> type | None:
    """A class from a module the user has already imported; never imports anything itself."""
    loaded = sys.modules.get(module)
    found = getattr(loaded, name, None) if loaded is not None else None
    return found if isinstance(found, type) else None


def _figure_image(figure: Any, label: str) -> ImageData | None:
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=figure.dpi, bbox_inches="tight")
    return image_from_bytes(out.getvalue(), "image/png", label)


def _repr_image(value: Any, label: str) -> ImageData | None:
    """The image of ``_repr_png_``/``_repr_jpeg_``: bytes, base64 text, or (data, metadata)."""
    for method, kind in (("_repr_png_", "image/png"), ("_repr_jpeg_", "image/jpeg")):
        # looked up on the class, as IPython does, so a catch-all __getattr__ is not a repr
        if getattr(type(value), method, None) is None:
            continue
        result = getattr(value, method)()
        if isinstance(result, tuple) and result:
            result = result[0]
        if isinstance(result, bytes | bytearray):
            image = image_from_bytes(bytes(result), kind, label)
        elif isinstance(result, str):
            image = image_from_base64(result, kind, label)
        else:
            continue
        if image is not None:
            return image
    return None


def _image_of(value: Any, label: str) -> ImageData | None:
    if isinstance(value, bytes | bytearray | memoryview):
        return image_from_bytes(bytes(value), label=label)
    figure = _loaded_class("matplotlib.figure", "Figure")
    if figure is not None and isinstance(value, figure):
        return _figure_image(value, label)
    pil_image = _loaded_class("PIL.Image", "Image")
    if pil_image is not None and isinstance(value, pil_image):
        return _encode(cast("PILImage", value), "image/png", label)
    ipython_image = _loaded_class("IPython.display", "Image")
    if ipython_image is not None and isinstance(value, ipython_image):
        data = getattr(value, "data", None)
        if isinstance(data, bytes) and (image := image_from_bytes(data, label=label)):
            return image
    return _repr_image(value, label)


def image_of(value: Any, label: str = "") -> ImageData | None:
    """An image of ``value`` if it is one (figure, PIL or IPython image, image bytes, an object
    with ``_repr_png_``/``_repr_jpeg_``); ``None`` otherwise.

    A figure is saved as PNG at its own dpi with a tight bounding box and stays open: it is the
    user's. Nothing is imported that the user has not imported already.
    """
    try:
        return _image_of(value, label)
    # the value is the user's: a raising savefig, _repr_png_ or property means "no image",
    # never a failed tool call (KeyboardInterrupt still propagates)
    except Exception:
        return None
