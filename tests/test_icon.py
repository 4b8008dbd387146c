"""``[feeds] icon``: the SVG refused where it cannot be drawn, and the PNG files drawn from it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import resvg_py

from conftest import SHIPPED_ENTRIES, RunCli
from infrafeed.build import build
from infrafeed.errors import DataError
from infrafeed.render.icons import icon_files
from infrafeed.source.loader import load
from outputs import run_infrafeed, subprocess_env, tree
from pngs import chunk_types, read_png

SETTING = 'icon = "favicon.svg"'
SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">{}</svg>'
EXAMPLE = "e.g. 'favicon.svg' for entries/favicon.svg"


def with_icon(entries: Path, setting: str, files: dict[str, str] | None = None) -> Path:
    """``entries`` with ``setting`` for its icon line and ``files`` written in."""
    site = entries / "site.toml"
    text, found = re.subn(r"^icon = .*$", setting, site.read_text(encoding="utf-8"), flags=re.M)
    assert found == 1
    site.write_text(text, encoding="utf-8")
    for name, content in (files or {}).items():
        (entries / name).parent.mkdir(parents=True, exist_ok=True)
        (entries / name).write_text(content, encoding="utf-8")
    return entries


def problems(entries: Path) -> list[str]:
    with pytest.raises(DataError) as caught:
        load(entries)
    return [str(problem) for problem in caught.value.problems]


# (setting, files to write, the message after "site.toml: feeds.icon: "); {e} is the folder.
BAD = [
    ('icon = "/srv/site/favicon.svg"', {},
     f"'/srv/site/favicon.svg' is an absolute path; give the path below the entries folder, "
     f"{EXAMPLE}"),
    ('icon = "../public/favicon.svg"', {},
     f"'../public/favicon.svg' climbs out of the entries folder ('..'); copy the SVG into it, "
     f"{EXAMPLE}"),
    ('icon = "https://example.org/favicon.svg"', {},
     f"'https://example.org/favicon.svg' is a URL; give the path of an SVG file in the entries "
     f"folder, {EXAMPLE}"),
    ('icon = "favicon.png"', {},
     "'favicon.png' is not an SVG file (a name ending in .svg): infrafeed draws the feeds' PNG "
     "icons from an SVG; a PNG of your own goes in logo"),
    ('icon = ".icons/favicon.svg"', {},
     "'.icons/favicon.svg' is not a path below the entries folder: use letters, digits, '.', "
     f"'_', '-' and '/', no part starting with a dot, {EXAMPLE}"),
    ('icon = "logo.svg"', {}, "{e}/logo.svg is missing: put the SVG there, or fix the path"),
    (SETTING, {"favicon.svg": "<svg"},
     "{e}/favicon.svg is not valid XML (unclosed token: line 1, column 0); save it as an SVG "
     "file"),
    (SETTING, {"favicon.svg": "<html/>"},
     '{e}/favicon.svg is not an SVG: its root is <html>, not <svg xmlns="http://www.w3.org/2000/'
     'svg">; give an SVG file'),
    (SETTING, {"favicon.svg": SVG.format('<image href="/home/me/photo.png"/>')},
     "{e}/favicon.svg: <image> links to '/home/me/photo.png', another file, which is not read: "
     "embed it as a data: URL, or draw it in the SVG"),
    (SETTING, {"favicon.svg": SVG.format("<g>" * 101 + "</g>" * 101)},
     "{e}/favicon.svg nests elements over 100 deep; flatten its groups"),
    (SETTING, {"favicon.svg": '<svg xmlns="http://www.w3.org/2000/svg" width="50%"/>'},
     "{e}/favicon.svg has no viewBox, nor a width and height in pixels, to tell what to draw; "
     'add viewBox="0 0 W H" to its <svg>'),
    (SETTING, {"favicon.svg": '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 a b"/>'},
     "{e}/favicon.svg: viewBox '0 0 a b' is not four numbers; write it 'x y width height', "
     "e.g. '0 0 32 32'"),
    (SETTING, {"favicon.svg": '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 0"/>'},
     "{e}/favicon.svg: its drawing is 32 × 0; give it an area"),
    (SETTING, {"favicon.svg": '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1e39 1"/>'},
     "{e}/favicon.svg cannot be drawn (SVG has an invalid size); fix the SVG"),
]  # fmt: skip


@pytest.mark.parametrize(("setting", "files", "message"), BAD)
def test_a_bad_icon_is_one_located_problem(
    shipped_entries: Path, setting: str, files: dict[str, str], message: str
) -> None:
    entries = with_icon(shipped_entries, setting, files)
    folder = entries.as_posix()
    assert problems(entries) == [f"{folder}/site.toml: feeds.icon: {message.format(e=folder)}"]


def test_a_link_out_and_a_folder_are_refused_where_the_setting_names_them(
    shipped_entries: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "secret.svg"
    elsewhere.write_text(SVG.format(""), encoding="utf-8")
    (shipped_entries / "favicon.svg").unlink()
    (shipped_entries / "favicon.svg").symlink_to(elsewhere)
    (shipped_entries / "images.svg").mkdir()
    folder = shipped_entries.as_posix()
    # Neither is a problem while no setting names it: an SVG is read as a possible icon only.
    # (A link to follow is no file to draw from.)
    drawn = SVG.format('<a href="https://example.org/"><rect width="9" height="9"/></a>')
    entries = with_icon(shipped_entries, 'icon = "drawn.svg"', {"drawn.svg": drawn})
    assert len(load(entries).releases) == 36
    assert problems(with_icon(entries, 'icon = "favicon.svg"')) == [
        f"{folder}/site.toml: feeds.icon: {folder}/favicon.svg is a symbolic link to a file "
        "outside the entries folder; put the file itself here"
    ]
    assert problems(with_icon(entries, 'icon = "images.svg"')) == [
        f"{folder}/site.toml: feeds.icon: {folder}/images.svg is not a regular file (a folder, "
        "device or FIFO)"
    ]


def test_the_command_refuses_a_bad_icon_and_leaves_the_output(
    shipped_entries: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    out = tmp_path / "out"
    assert run_cli("build", "--quiet", "--entries", str(shipped_entries), "--out", str(out))[0] == 0
    before = tree(out)
    (shipped_entries / "favicon.svg").write_text("<html/>", encoding="utf-8")
    code, stdout, stderr = run_cli("build", "--entries", str(shipped_entries), "--out", str(out))
    assert (code, stdout) == (1, "")
    assert f"{shipped_entries.as_posix()}/site.toml: feeds.icon: " in stderr
    assert "Traceback" not in stderr
    assert tree(out) == before
    assert run_cli("check", "--entries", str(shipped_entries))[0] == 1


@pytest.fixture(scope="module")
def shipped_pngs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    root = tmp_path_factory.mktemp("icons")
    shutil.copytree(SHIPPED_ENTRIES, root / "entries")
    build(root / "entries", root / "out")
    return {name: (root / "out" / name).read_bytes() for name in ("icon.png", "favicon.png")}


def test_the_shipped_icons_are_square_pngs_without_metadata(
    shipped_pngs: dict[str, bytes],
) -> None:
    for name, side in (("icon.png", 512), ("favicon.png", 64)):
        png = read_png(shipped_pngs[name])
        assert (png.width, png.height) == (side, side), name
        # Nothing but the image: no tIME, tEXt or other chunk a build could vary.
        assert set(chunk_types(shipped_pngs[name])) == {b"IHDR", b"IDAT", b"IEND"}, name


def test_the_letters_are_drawn(shipped_pngs: dict[str, bytes]) -> None:
    """The favicon's "AI" is text (font-family -apple-system, sans-serif): white on the gradient
    in the middle of the 64 px icon; the rounded corner is transparent."""
    png = read_png(shipped_pngs["favicon.png"])
    middle = [png.getpixel((x, y)) for y in range(24, 44) for x in range(16, 48)]
    white = [p for p in middle if min(p) >= 240]
    assert len(white) > len(middle) // 5, len(white)
    assert png.getpixel((0, 0))[3] == 0
    assert png.getpixel((32, 4))[2] > 200 and png.getpixel((32, 4))[0] < 150  # the blue gradient
    # The control: resvg with no font at all draws no letter there.
    square = load(SHIPPED_ENTRIES).icon
    assert square is not None
    bare = read_png(resvg_py.svg_to_bytes(svg_string=square, width=64, height=64,
                                          skip_system_fonts=True))  # fmt: skip
    assert not [
        p for y in range(24, 44) for x in range(16, 48) if min(p := bare.getpixel((x, y))) >= 240
    ]


def test_a_wide_drawing_is_fitted_and_centred_on_transparency(shipped_entries: Path) -> None:
    wide = '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="32">'
    wide += '<rect width="64" height="32" fill="#f00"/></svg>'  # no viewBox: its pixel size
    square = load(with_icon(shipped_entries, 'icon = "wide.svg"', {"wide.svg": wide})).icon
    assert square is not None
    png = read_png(dict(icon_files(square))["favicon.png"])
    assert (png.width, png.height) == (64, 64)
    red = (255, 0, 0, 255)
    assert png.getpixel((32, 8))[3] == 0 and png.getpixel((32, 55))[3] == 0  # above and below
    assert png.getpixel((0, 32)) == red and png.getpixel((63, 32)) == red
    assert png.getpixel((32, 17)) == red and png.getpixel((32, 46)) == red


def test_editing_the_svg_rebuilds_the_icons(shipped_entries: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    build(shipped_entries, out)
    first = (out / "favicon.png").read_bytes()
    assert build(shipped_entries, out).skipped
    svg = shipped_entries / "favicon.svg"
    svg.write_text(svg.read_text(encoding="utf-8").replace("#007aff", "#ff3b30"), "utf-8")
    result = build(shipped_entries, out)
    assert not result.skipped
    assert {"icon.png", "favicon.png"} <= set(result.report.written)
    assert (out / "favicon.png").read_bytes() != first


def _dejavu_regular() -> Path:
    """The machine's DejaVu Sans (regular): a face resvg would take for text of normal weight
    in "DejaVu Sans" if it were let at the system's fonts."""
    for folder in (Path("/usr/share/fonts"), Path("/usr/local/share/fonts")):
        for found in sorted(folder.rglob("DejaVuSans.ttf")):
            return found
    if os.environ.get("CI") == "true":
        pytest.fail("DejaVuSans.ttf is not installed; .ci/run must install fonts-dejavu-core")
    pytest.skip("DejaVuSans.ttf is not installed (apt-get install fonts-dejavu-core)")


def test_the_bytes_do_not_depend_on_the_installed_fonts(
    shipped_entries: Path, tmp_path: Path
) -> None:
    """Built with no font on the machine (a clean CI box) and with one that would win if the
    system's fonts were read: the same bytes. Fonts are found through fontconfig's file, which
    FONTCONFIG_FILE replaces; the control shows resvg reading the system's fonts sees it."""
    regular = _dejavu_regular()
    svg = shipped_entries / "favicon.svg"
    normal = svg.read_text(encoding="utf-8").replace('font-weight="700"', 'font-weight="400"')
    svg.write_text(normal.replace("-apple-system,sans-serif", "DejaVu Sans"), encoding="utf-8")
    configs = {}
    for name, fonts in (("none", []), ("regular", [regular])):
        folder = tmp_path / name
        folder.mkdir()
        for font in fonts:
            shutil.copy(font, folder / font.name)
        config = tmp_path / f"{name}.conf"
        config.write_text(f"<fontconfig><dir>{folder}</dir></fontconfig>\n", encoding="utf-8")
        configs[name] = subprocess_env(FONTCONFIG_FILE=str(config))
    drawn = {}
    for name, env in configs.items():
        out = tmp_path / f"out-{name}"
        done = run_infrafeed("build", "--quiet", "--entries", str(shipped_entries),
                             "--out", str(out), env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr
        drawn[name] = [(out / png).read_bytes() for png in ("icon.png", "favicon.png")]
    assert drawn["none"] == drawn["regular"]
    probe = (
        "import resvg_py, sys; sys.stdout.buffer.write(resvg_py.svg_to_bytes(svg_string="
        f"open({str(svg)!r}).read(), width=64, height=64))"
    )
    seen = {
        name: subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                             check=True).stdout
        for name, env in configs.items()
    }  # fmt: skip
    assert seen["none"] != seen["regular"], "FONTCONFIG_FILE does not reach resvg"
