"""The package's shape: every stage a regular package, and no import circle in src/.

A circle makes the order of imports matter (a name read before its module finished) and the
stages impossible to read one at a time. Every import counts: at module level, inside a
function, and under ``TYPE_CHECKING``, since each says one module leans on another.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

SRC = Path(__file__).parent.parent / "src"
PACKAGE = SRC / "infrafeed"


def _module(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The modules of infrafeed that ``path`` imports by name."""
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:  # ``from . import x``: x may be a module
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
    return {imported for imported in found if imported in modules and imported != name}


def _graph() -> dict[str, set[str]]:
    files = sorted(PACKAGE.rglob("*.py"))
    modules = {_module(path) for path in files}
    return {_module(path): _imports(path, modules) for path in files}


def test_every_stage_is_a_regular_package() -> None:
    folders = {path.parent for path in PACKAGE.rglob("*.py")}
    assert (
        sorted(str(f.relative_to(SRC)) for f in folders if not (f / "__init__.py").exists()) == []
    )
    for folder in folders - {PACKAGE}:
        doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text(encoding="utf-8")))
        assert doc and "takes" in doc and "gives" in doc, f"{folder.name}: say what it takes, gives"


def test_no_import_circle() -> None:
    try:
        graphlib.TopologicalSorter(_graph()).prepare()
    except graphlib.CycleError as error:
        pytest.fail(f"import circle: {' -> '.join(error.args[1])}")


def test_the_walk_sees_imports() -> None:
    # The circle test is only as good as the walk: it must see relative and lazy imports.
    graph = _graph()
    assert "infrafeed.compiled" in graph["infrafeed.cache"]
    assert "infrafeed.cache" in graph["infrafeed.build"]  # imported inside a function
    assert "infrafeed._version" in graph["infrafeed.changelog.importer"]  # ``from .._version``
    assert "infrafeed.publish" in graph["infrafeed.build"]  # a package's __init__
