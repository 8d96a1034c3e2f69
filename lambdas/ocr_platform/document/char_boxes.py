"""Character boxes of a PDF text layer in the text's own frame: their union, the gap between two, and the quarter
turns between the page's frame and the text's; and how a point of the page lands on its render (``PageGeometry``).
Boxes are ``left, bottom, right, top`` (y up), as pdfium gives them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Box = tuple[float, float, float, float]

#: A character further than this (radians) from a multiple of 90 degrees is slanted text, left to OCR.
ANGLE_TOLERANCE = 0.05


def union_box(boxes: Sequence[Box | None]) -> Box:
    """The box around ``boxes`` (``None``, a space, has none).

    >>> union_box([(0, 0, 5, 9), None, (7, 1, 12, 10)])
    (0, 0, 12, 10)
    """
    real = [box for box in boxes if box is not None]
    return min(b[0] for b in real), min(b[1] for b in real), max(b[2] for b in real), max(b[3] for b in real)


def char_gap(last: Box, box: Box) -> float:
    """The space between a character's box and the one before it in the layer's (logical) order, on whichever side it
    lies: right-to-left text (Arabic, Hebrew) comes in the order it is typed, each character left of the one before.

    >>> char_gap((0, 0, 10, 10), (12, 0, 20, 10)), char_gap((20, 0, 30, 10), (8, 0, 18, 10)), char_gap((0, 0, 10, 10), (8, 0, 18, 10))
    (2, 2, -2)
    """
    return max(box[0] - last[2], last[0] - box[2])


def turn(point: tuple[float, float], quarter: int) -> tuple[float, float]:
    """``point`` turned counter-clockwise by ``quarter`` quarter turns about the origin."""
    x, y = point
    for _ in range(quarter % 4):
        x, y = -y, x
    return x, y


def turned_box(box: Box, quarter: int) -> Box:
    """A page-space box seen in the frame of text turned ``quarter`` quarter turns (the text then runs along +x)."""
    left, bottom, right, top = box
    points = [turn(point, -quarter % 4) for point in ((left, bottom), (right, top))]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


@dataclass(frozen=True)
class PageGeometry:
    """How a point of a PDF page's user space lands on its render (pdfium renders the crop box, turned by ``/Rotate``),
    and back: the text layer maps characters to pixels, the searchable PDF maps a result's pixels to user space.

    >>> geometry = PageGeometry(left=0, bottom=0, right=600, top=800, rotation=0, scale=2.0)
    >>> geometry.to_pixels(100, 700)
    (200.0, 200.0)
    >>> turned = PageGeometry(left=0, bottom=0, right=600, top=800, rotation=90, scale=1.0)
    >>> turned.to_pixels(100, 700), turned.to_user(700, 100)
    ((700.0, 100.0), (100.0, 700.0))
    """

    left: float
    bottom: float
    right: float
    top: float
    rotation: int
    scale: float

    def to_pixels(self, x: float, y: float) -> tuple[float, float]:
        u, v = x - self.left, self.top - y
        width, height = self.right - self.left, self.top - self.bottom
        if self.rotation == 90:
            u, v = height - v, u
        elif self.rotation == 180:
            u, v = width - u, height - v
        elif self.rotation == 270:
            u, v = v, width - u
        return u * self.scale, v * self.scale

    def to_user(self, x: float, y: float) -> tuple[float, float]:
        """The user-space point of the rendered pixel (``x``, ``y``): ``to_pixels`` undone."""
        u, v = x / self.scale, y / self.scale
        width, height = self.right - self.left, self.top - self.bottom
        if self.rotation == 90:
            u, v = v, height - u
        elif self.rotation == 180:
            u, v = width - u, height - v
        elif self.rotation == 270:
            u, v = width - v, u
        return self.left + u, self.top - v
