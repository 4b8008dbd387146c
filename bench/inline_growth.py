"""Time ``infrafeed check`` on the inline patterns that make Markdown parsers slow, at n, 2n, 4n.

    python bench/inline_growth.py [--items N] [--runs R]

Each pattern fills every summary of N article changes (5,000 characters, the schema's limit):
runs of ``*``, of ``[``, of backticks of growing length, of backslashes, and brackets nested
deep. A parser with quadratic cases (a delimiter run scanned again for every closer, a bracket
matched again for every opener) shows it as a growth well above 4 from n to 4n items; the
bound is 5 (start-up is in every time, and only lowers the ratio). The last line gives each
pattern's growth, as bench/RESULTS.md records it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import write_corpus

LENGTH = 5_000  # characters in every summary
PATTERNS = {
    "stars": ("a*" * LENGTH)[:LENGTH],  # emphasis openers, never closed in a way that matches
    "brackets": ("[a" * LENGTH)[:LENGTH],  # link openers, never closed
    # Code spans opened with every length of backtick run, none closed.
    "backticks": "".join(f"{'`' * n}a" for n in range(1, 200))[:LENGTH],
    "backslashes": ("\\a\\" * LENGTH)[:LENGTH],
    "nested": "[" * (LENGTH // 2) + "]" * (LENGTH // 2),  # links inside links
}


def write_site(folder: Path, items: int, summary: str) -> None:
    """The bench corpus's settings, and ``items`` articles a release of 100, each ``summary``."""
    write_corpus(1, folder)  # for its site.toml
    for old in folder.glob("*/*.toml"):
        old.unlink()
    for start in range(0, items, 100):
        day = dt.date(2000, 1, 3) + dt.timedelta(days=start // 100)
        articles = "".join(
            f'\n[[groups.articles]]\nid = "cuda-article-{n}"\nchapter = 1\nnumber = "1.{n}"\n'
            # Each summary its own (parsing is memoised per text): its number, then the pattern.
            f"title = 'Bài {n}'\nsummary = '{f'{n} {summary}'[:LENGTH]}'\n"
            for n in range(start, min(start + 100, items))
        )
        text = f'date = {day}\n\n[[groups]]\nkind = "new"\nmodule = 2\n{articles}'
        path = folder / f"{day:%Y}" / f"{day}.toml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")


def check_seconds(folder: Path, runs: int) -> tuple[float, int]:
    """The fastest of ``runs`` runs of ``infrafeed check`` on ``folder``, and its exit code."""
    command = [str(Path(sys.executable).with_name("infrafeed")), "check", "--entries", str(folder)]
    best, code = float("inf"), 0
    for _ in range(runs):
        start = time.perf_counter()
        code = subprocess.run(command, capture_output=True, check=False).returncode
        best = min(best, time.perf_counter() - start)
    return best, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50, help="n (default 50)")
    parser.add_argument("--runs", type=int, default=3, help="runs per point; the fastest counts")
    args = parser.parse_args()
    growth = []
    print(f"{'pattern':>12} {'items':>6} {'check s':>8} exit")
    for name, summary in PATTERNS.items():
        times = []
        for items in (args.items, 2 * args.items, 4 * args.items):
            with tempfile.TemporaryDirectory(prefix="infrafeed-inline-") as tmp:
                write_site(Path(tmp), items, summary)
                seconds, code = check_seconds(Path(tmp), args.runs)
            times.append(seconds)
            print(f"{name:>12} {items:>6} {seconds:>8.3f} {code}")
        growth.append(f"{name} {times[2] / times[0]:.2f}")
    print(f"4n/n (bound 5) at n={args.items}: " + ", ".join(growth))


if __name__ == "__main__":
    main()
