"""Where a searchable PDF's invisible text goes: a polygon in pixels of the page image mapped to a box in PDF space
(its bottom-left corner, baseline direction, length and height) that ``outputs.searchable_pdf`` fits a string to.

A polygon's corners run as a line's: p0 top left, p1 top right (p0 to p1 the reading direction), p2 bottom right,
p3 bottom left. Its text runs along its top edge, or, for a line only skewed from a quarter turn
(``level_direction``), level in that quarter turn's direction through the polygon's centre.

>>> identity = lambda x, y: (x, -y)
>>> box = place([[0, 0], [100, 7], [99, 27], [-1, 20]], identity, level_direction([[0, 0], [100, 7], [99, 27], [-1, 20]], identity))
>>> box.direction, round(box.length, 1), round(box.height, 1)
((1.0, 0.0), 100.0, 20.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Point = tuple[float, float]
PixelToPoint = Callable[[float, float], Point]

#: A polygon shorter or lower than this many pixels of the page image is noise, not a line of text.
MIN_LINE_PIXELS = 2.0
#: The most a line may be skewed from a quarter turn and still be drawn level, its words stepping along its slope
#: (a scanner's skew is a few degrees): pdftotext starts a new word wherever a character's baseline is half a point
#: off the word's first, so a word drawn along a 4 degree slope would come out in pieces of two or three letters.
MAX_LEVEL_SKEW_DEGREES = 10.0


@dataclass(frozen=True)
class Placement:
    """A line's text box in PDF space: its bottom-left corner, baseline direction, length and height."""

    origin: Point
    direction: Point
    length: float
    height: float


def level_direction(polygon: Sequence[Sequence[float]], to_point: PixelToPoint) -> Point | None:
    """The quarter-turn direction (a unit vector in PDF space) a line runs in when it is only skewed from it, by
    ``MAX_LEVEL_SKEW_DEGREES`` or less; ``None`` for a slanted line (or a degenerate polygon)."""
    if len(polygon) != 4 or not all(len(p) == 2 and all(math.isfinite(float(c)) for c in p) for p in polygon):
        return None
    (x0, y0), (x1, y1) = (to_point(float(p[0]), float(p[1])) for p in polygon[:2])
    if x0 == x1 and y0 == y1:
        return None
    angle = math.degrees(math.atan2(y1 - y0, x1 - x0))
    quarter = round(angle / 90)
    if abs(angle - quarter * 90) > MAX_LEVEL_SKEW_DEGREES:
        return None
    return ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))[quarter % 4]


def place(polygon: Sequence[Sequence[float]], to_point: PixelToPoint, level: Point | None = None) -> Placement | None:
    """Where a polygon's text lies in PDF space (``None`` for a degenerate polygon): along its top edge, or, given
    the ``level`` direction, along that direction through the polygon's centre, as long as the polygon runs that way."""
    if len(polygon) != 4 or not all(len(p) == 2 and all(math.isfinite(float(c)) for c in p) for p in polygon):
        return None
    pixels = [(float(p[0]), float(p[1])) for p in polygon]
    if _distance(pixels[0], pixels[1]) < MIN_LINE_PIXELS or _mean_height(pixels) < MIN_LINE_PIXELS:
        return None
    p0, p1, p2, p3 = (to_point(x, y) for x, y in pixels)
    length, height = _distance(p0, p1), _mean_height([p0, p1, p2, p3])
    if length <= 0 or height <= 0:
        return None
    if level is not None:
        (dx, dy), centre = level, ((p0[0] + p1[0] + p2[0] + p3[0]) / 4, (p0[1] + p1[1] + p2[1] + p3[1]) / 4)
        length = ((p1[0] + p2[0] - p0[0] - p3[0]) * dx + (p1[1] + p2[1] - p0[1] - p3[1]) * dy) / 2
        if length <= 0:
            return None
        start = (centre[0] - dx * length / 2 - dy * height / 2, centre[1] - dy * length / 2 + dx * height / 2)
        return Placement(origin=(start[0] + dy * height, start[1] - dx * height), direction=level, length=length, height=height)
    dx, dy = (p1[0] - p0[0]) / length, (p1[1] - p0[1]) / length
    # Up is the baseline direction turned a quarter counter-clockwise; the box's bottom-left lies below p0.
    return Placement(origin=(p0[0] + dy * height, p0[1] - dx * height), direction=(dx, dy), length=length, height=height)


def _distance(a: Point, b: Point) -> float:
    return math.hypot(b[0] - a[0], b[1] - a[1])


def _mean_height(points: Sequence[Point]) -> float:
    return (_distance(points[1], points[2]) + _distance(points[0], points[3])) / 2.0
