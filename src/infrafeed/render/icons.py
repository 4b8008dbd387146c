"""The feeds' icon files: the square SVG of ``[feeds] icon`` (source/icon.py) as PNG. Pure.

resvg draws it with no system font: text is drawn with the font shipped in fonts/ (DejaVu Sans
Bold, its Latin and Vietnamese letters), whatever the font-family, so that the bytes depend on
the SVG and infrafeed's version alone, on any machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources

import resvg_py

from .parts import ICON_FILES

_FONT = resources.files(__package__) / "fonts" / "DejaVuSans-Bold-Latin.ttf"
_FAMILY = "DejaVu Sans"


def icon_files(square: str) -> Iterator[tuple[str, bytes]]:
    """Each PNG file below the output folder, and its bytes."""
    with resources.as_file(_FONT) as font:  # a file already, but for a zipped install
        for name, side in ICON_FILES:
            png = resvg_py.svg_to_bytes(
                svg_string=square,
                width=side,
                height=side,
                dpi=96,  # resvg's own default; 0, the binding's, would make 1mm nothing
                skip_system_fonts=True,
                font_files=[str(font)],
                # Every generic family and the default are ours; usvg falls back to one of
                # them for a family it does not have.
                font_family=_FAMILY,
                serif_family=_FAMILY,
                sans_serif_family=_FAMILY,
                cursive_family=_FAMILY,
                fantasy_family=_FAMILY,
                monospace_family=_FAMILY,
            )
            yield name, png
