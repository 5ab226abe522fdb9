"""The images that code run by the ``python`` tool produced, for the model to see.

Two kinds: what the code displayed (``display(img)``, ``plt.show()`` under the inline
backend), captured from IPython's display publisher while the code runs, and matplotlib
figures it left open, which are rendered and then closed — they show in the tool card, not
again below the chat cell when the cell ends.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from ..model.content import MAX_IMAGES, ImageData
from ..model.images import image_from_base64, image_from_bytes, image_of

__all__ = ["produced_images"]

_IMAGE_MIMES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _open_figures() -> set[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    return set(pyplot.get_fignums()) if pyplot is not None else set()


@contextlib.contextmanager
def produced_images() -> Iterator[list[ImageData]]:
    """Collect, into the yielded list, the images the code in the block produced."""
    images: list[ImageData] = []
    before = _open_figures()
    capture: Any = contextlib.nullcontext()
    with contextlib.suppress(Exception):
        from IPython import get_ipython
        from IPython.utils.capture import capture_output

        if get_ipython() is not None:
            capture = capture_output(stdout=False, stderr=False, display=True)
    with capture as captured:
        try:
            yield images
        finally:
            for output in getattr(captured, "outputs", ()):
                for mime in _IMAGE_MIMES:
                    data = output.data.get(mime) if isinstance(output.data, dict) else None
                    label = f"displayed {len(images) + 1}"
                    image = (
                        image_from_base64(data, mime, label)
                        if isinstance(data, str)
                        else image_from_bytes(data, mime, label)
                        if isinstance(data, bytes)
                        else None
                    )
                    if data is not None:
                        images.extend([image] if image is not None else [])
                        break
            _take_new_figures(before, images)
    del images[MAX_IMAGES:]


def _take_new_figures(before: set[int], images: list[ImageData]) -> None:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in sorted(set(pyplot.get_fignums()) - before):
        figure = pyplot.figure(number)
        image = image_of(figure, f"figure {number}")
        if image is not None and len(images) < MAX_IMAGES:
            images.append(image)
        pyplot.close(figure)
