"""Images from bytes, base64 outputs and notebook objects: sizes, downscaling, never raising."""

from __future__ import annotations

import base64
import io
import sys
from typing import Any

import matplotlib
import pytest
from IPython.display import Image as IPythonImage
from PIL import Image

from jupyter_turns.model.content import ImageData
from jupyter_turns.model.images import (
    MAX_SIDE,
    image_from_base64,
    image_from_bytes,
    image_of,
)

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # after choosing the backend


def encoded(size: tuple[int, int], fmt: str, mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, "red" if mode == "RGB" else 1).save(out, format=fmt)
    return out.getvalue()


def decoded_size(image: ImageData) -> tuple[int, int]:
    with Image.open(io.BytesIO(base64.b64decode(image.data))) as opened:
        return opened.size


@pytest.mark.parametrize(("fmt", "media_type"), [("PNG", "image/png"), ("JPEG", "image/jpeg")])
def test_small_png_and_jpeg_sizes_come_from_the_header_and_the_bytes_pass_unchanged(
    fmt: str, media_type: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = encoded((40, 25), fmt)
    monkeypatch.setitem(sys.modules, "PIL", None)  # importing Pillow now fails: not needed
    image = image_from_bytes(data, label="cell 1")
    assert image is not None
    assert (image.media_type, image.width, image.height) == (media_type, 40, 25)
    assert base64.b64decode(image.data) == data
    assert image.label == "cell 1"


def test_gif_size_comes_from_the_header_and_webp_size_from_pillow() -> None:
    gif = image_from_bytes(encoded((33, 7), "GIF"))
    webp = image_from_bytes(encoded((33, 7), "WEBP"))
    assert gif is not None and (gif.media_type, gif.width, gif.height) == ("image/gif", 33, 7)
    assert webp is not None and (webp.media_type, webp.width, webp.height) == ("image/webp", 33, 7)


@pytest.mark.parametrize(("fmt", "media_type"), [("PNG", "image/png"), ("JPEG", "image/jpeg")])
def test_a_wide_image_is_downscaled_to_the_long_side_and_keeps_its_format(
    fmt: str, media_type: str
) -> None:
    image = image_from_bytes(encoded((3000, 1000), fmt))
    assert image is not None
    assert (image.media_type, image.width, image.height) == (media_type, MAX_SIDE, 523)
    assert decoded_size(image) == (1568, 523)


def test_a_tall_gif_is_downscaled_to_png() -> None:
    image = image_from_bytes(encoded((1000, 3000), "GIF"))
    assert image is not None
    assert (image.media_type, image.width, image.height) == ("image/png", 523, 1568)
    assert decoded_size(image) == (523, 1568)


def test_bytes_that_are_not_an_image_are_none_whatever_the_hint() -> None:
    assert image_from_bytes(b"just some text", "image/png") is None
    assert image_from_bytes(b"") is None
    assert image_from_bytes(b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml") is None


def test_a_damaged_large_png_is_none_rather_than_an_error() -> None:
    header = encoded((3000, 1000), "PNG")[:40]  # the header promises pixels that never come
    assert image_from_bytes(header) is None


def test_the_magic_bytes_win_over_a_wrong_hint() -> None:
    image = image_from_bytes(encoded((10, 10), "JPEG"), "image/png")
    assert image is not None and image.media_type == "image/jpeg"


def test_a_notebook_output_in_base64_with_newlines_is_read_and_downscaled() -> None:
    text = base64.encodebytes(encoded((2000, 500), "PNG")).decode("ascii")
    assert "\n" in text
    image = image_from_base64(text, "image/png", label="cell 3 output 1")
    assert image is not None
    assert (image.width, image.height, image.label) == (1568, 392, "cell 3 output 1")
    assert image_from_base64("not base64!", "image/png") is None


def test_a_matplotlib_figure_becomes_a_png_of_its_pixel_size_and_stays_open() -> None:
    figure = plt.figure(figsize=(4, 3), dpi=100)
    figure.gca().plot([1, 2, 3], [3, 1, 2])
    try:
        image = image_of(figure, "figure 1")
        assert image is not None and image.media_type == "image/png"
        assert (image.width, image.height) == decoded_size(image)
        assert image.width is not None and image.height is not None
        assert 200 < image.width <= 400 and 150 < image.height <= 300
        assert plt.fignum_exists(figure.number)
    finally:
        plt.close(figure)


def test_a_large_figure_is_downscaled() -> None:
    from matplotlib.figure import Figure

    image = image_of(Figure(figsize=(40, 10), dpi=100))
    assert image is not None and image.width == MAX_SIDE
    assert decoded_size(image) == (image.width, image.height)


def test_a_pil_image_and_image_bytes_are_images() -> None:
    pil = image_of(Image.new("RGBA", (64, 32)))
    raw = image_of(bytearray(encoded((5, 6), "JPEG")))
    assert pil is not None and (pil.media_type, pil.width, pil.height) == ("image/png", 64, 32)
    assert raw is not None and (raw.media_type, raw.width, raw.height) == ("image/jpeg", 5, 6)


def test_an_ipython_image_is_read_from_its_data() -> None:
    png = image_of(IPythonImage(data=encoded((12, 8), "PNG")))
    jpeg = image_of(IPythonImage(data=encoded((9, 4), "JPEG"), width=100))
    assert png is not None and (png.media_type, png.width, png.height) == ("image/png", 12, 8)
    assert jpeg is not None and (jpeg.media_type, jpeg.width, jpeg.height) == ("image/jpeg", 9, 4)


class Plot:
    """A rich-display object like many libraries make: base64 PNG plus metadata."""

    def _repr_png_(self) -> tuple[str, dict[str, Any]]:
        return base64.b64encode(encoded((20, 10), "PNG")).decode("ascii"), {"width": 20}


class JpegOnly:
    def _repr_png_(self) -> None:
        return None

    def _repr_jpeg_(self) -> bytes:
        return encoded((7, 3), "JPEG")


class Broken:
    def _repr_png_(self) -> bytes:
        raise RuntimeError("renderer is gone")

    def __repr__(self) -> str:
        raise RuntimeError("no repr either")


class Anything:
    """Answers every attribute, so only a class-level _repr_png_ counts as one."""

    def __getattr__(self, name: str) -> Any:
        return lambda: b"\x89PNG\r\n\x1a\n"


def test_objects_with_repr_png_or_repr_jpeg_are_images() -> None:
    plot = image_of(Plot())
    jpeg = image_of(JpegOnly())
    assert plot is not None and (plot.media_type, plot.width, plot.height) == ("image/png", 20, 10)
    assert jpeg is not None and (jpeg.media_type, jpeg.width) == ("image/jpeg", 7)


def test_broken_and_ordinary_objects_are_not_images() -> None:
    assert image_of(Broken()) is None
    assert image_of(Anything()) is None
    for value in (None, 3, "a string", [1, 2], {"a": 1}, object()):
        assert image_of(value) is None
