"""``[feeds] icon``: an SVG file of the entries folder, checked and made a square drawing.

render/icons.py draws what this gives as PNG files. Only what resvg would draw from the file
alone is accepted: it reads no other file (an ``href`` to one is refused) and no system font.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import resvg_py

from ..errors import Problem
from .files import SITE_FILE, Snapshot
from .models import Site

_SVG = "{http://www.w3.org/2000/svg}"
_HREFS = ("href", "{http://www.w3.org/1999/xlink}href")
# Deeper than any drawing is nested: resvg walks the tree recursively, and so does ET writing it.
_MAX_DEPTH = 100
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_LENGTH = re.compile(rf"\s*({_NUMBER})\s*(?:px)?\s*")


def icon_of(snapshot: Snapshot, site: Site, problems: list[Problem]) -> str | None:
    """The SVG that ``[feeds] icon`` names, as a square drawing: the file's drawing fitted,
    centred, in a transparent square. None when unset, or with a problem added."""
    if (name := site.feeds.icon) is None:
        return None
    shown = snapshot.site.shown.removesuffix(SITE_FILE) + name
    file = next((f for f in snapshot.icons if f.relative == name), None)
    try:
        if file is None:
            raise _Refused(f"{shown} is missing: put the SVG there, or fix the path")
        if file.data is None:
            raise _Refused(f"{shown} {file.problem}")
        square = _squared(file.data, shown)
        try:  # all that resvg refuses; the fonts do not matter here
            resvg_py.svg_to_bytes(svg_string=square, width=16, height=16, skip_system_fonts=True)
        except ValueError as exc:
            raise _Refused(f"{shown} cannot be drawn ({exc}); fix the SVG") from None
    except _Refused as refused:
        problems.append(Problem(snapshot.site.shown, "feeds.icon", str(refused)))
        return None
    return square


class _Refused(Exception):
    pass


def _squared(data: bytes, shown: str) -> str:
    try:
        root = ET.fromstring(data)  # noqa: S314 (expat expands no external entity, and caps
        # what internal ones may expand to)
    except ET.ParseError as exc:
        raise _Refused(f"{shown} is not valid XML ({exc}); save it as an SVG file") from None
    if root.tag != f"{_SVG}svg":
        tag = root.tag.rpartition("}")[2]
        why = f'its root is <{tag}>, not <svg xmlns="http://www.w3.org/2000/svg">'
        raise _Refused(f"{shown} is not an SVG: {why}; give an SVG file")
    _checked_tree(root, shown)
    if (box := root.get("viewBox")) is not None:
        numbers = re.split(r"[\s,]+", box.strip())
        if len(numbers) != 4 or not all(re.fullmatch(_NUMBER, n) for n in numbers):
            why = f"viewBox '{box[:60]}' is not four numbers"
            raise _Refused(f"{shown}: {why}; write it 'x y width height', e.g. '0 0 32 32'")
        width, height = float(numbers[2]), float(numbers[3])
    else:
        sizes = [_LENGTH.fullmatch(root.get(side, "")) for side in ("width", "height")]
        if not (sizes[0] and sizes[1]):
            why = "has no viewBox, nor a width and height in pixels, to tell what to draw"
            raise _Refused(f'{shown} {why}; add viewBox="0 0 W H" to its <svg>')
        width, height = float(sizes[0][1]), float(sizes[1][1])
        box = f"0 0 {sizes[0][1]} {sizes[1][1]}"
    if not (width > 0 and height > 0):
        raise _Refused(f"{shown}: its drawing is {width:g} × {height:g}; give it an area")
    # The viewport a square around the drawing (its longer side), which
    # "xMidYMid meet" fits and centres; what it does not cover is left transparent.
    side = f"{max(width, height):g}"
    root.attrib.update(viewBox=box, width=side, height=side, preserveAspectRatio="xMidYMid meet")
    return ET.tostring(root, encoding="unicode")


def _checked_tree(root: ET.Element, shown: str) -> None:
    """Refuse a tree nested too deep, or that names another file."""
    level = [root]
    for _ in range(_MAX_DEPTH):
        for element in level:
            if element.tag == f"{_SVG}a":  # a link to follow, in a browser: not drawn from
                continue
            for key in _HREFS:
                link = element.get(key, "").strip()
                if link and not link.startswith(("#", "data:")):
                    tag = element.tag.rpartition("}")[2]
                    raise _Refused(
                        f"{shown}: <{tag}> links to '{link[:100]}', another file, which is not "
                        "read: embed it as a data: URL, or draw it in the SVG"
                    )
        level = [child for element in level for child in element]
        if not level:
            return
    raise _Refused(f"{shown} nests elements over {_MAX_DEPTH} deep; flatten its groups")
