"""Time infrafeed as whole processes, side by side with the baseline, at several sizes.

    python bench/run.py --items 1000 --items 10000 --items 100000

For each size, a synthetic site (bench/corpus.py) is written once, then, after
a warm-up build, each scenario runs several times as a fresh process:

- cold:        ``infrafeed build`` into an empty output folder, with an empty cache;
- noop:        the same build again, nothing changed: it reads and hashes the
               entry files, and checks the published ones;
- incremental: the build after adding one new release file (about three
               article changes; each run adds the next day's release);
- baseline:    ``bench/baseline.py``, the same feeds with nothing else.

The shipped ``entries/`` get the same rows, and start-up is measured once:
``python -c "import infrafeed.cli"`` and ``infrafeed --help``. Each row shows
the median wall time with the fastest and slowest run, the median peak RSS
of the process, and the median bytes it wrote (blocks the kernel counted,
so files written and then discarded count too). The last line gives the
ratios the targets are stated in.

Run it with the Python of the environment where infrafeed is installed: the
``infrafeed`` command beside that interpreter is the one measured.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from corpus import release_text, write_corpus

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent


@dataclass(frozen=True)
class Run:
    seconds: float
    max_rss: int  # bytes
    written: int  # bytes


@dataclass(frozen=True)
class Row:
    size: str
    scenario: str
    runs: tuple[Run, ...]

    @property
    def seconds(self) -> float:
        return statistics.median(r.seconds for r in self.runs)

    @property
    def rss(self) -> float:
        return statistics.median(r.max_rss for r in self.runs)

    @property
    def written(self) -> float:
        return statistics.median(r.written for r in self.runs)


# Children write and use .pyc files, as an installed infrafeed does, even where the
# calling environment says not to (some sandboxes set PYTHONDONTWRITEBYTECODE).
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def measure(argv: Sequence[str]) -> Run:
    """Run ``argv`` to completion; wall time, peak RSS and bytes written of that process."""
    start = time.perf_counter()
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    assert process.stderr is not None
    # Read before waiting: a build that says more than a pipe holds would wait for ever.
    errors = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {process.returncode}:\n{errors}")
    # ru_maxrss is in KiB on Linux; ru_oublock in 512-byte blocks.
    return Run(seconds, usage.ru_maxrss * 1024, usage.ru_oublock * 512)


class Bench:
    def __init__(self, work: Path, runs: int, big_runs: int) -> None:
        self.work = work
        self.runs = runs
        self.big_runs = big_runs
        python = Path(sys.executable)
        command = python.parent / "infrafeed"
        if not command.exists():
            raise SystemExit(f"{command} not found: run this with the venv's python")
        self.infrafeed = str(command)
        self.python = str(python)
        self.rows: list[Row] = []
        # Older versions have no --cache option (for comparing with them).
        usage = subprocess.run(
            [self.infrafeed, "build", "--help"], capture_output=True, text=True, check=True, env=ENV
        )
        self.has_cache = "--cache" in usage.stdout

    def build(self, entries: Path, out: Path, cache: Path) -> list[str]:
        argv = [self.infrafeed, "build", "--entries", str(entries), "--out", str(out)]
        return argv + (["--cache", str(cache)] if self.has_cache else [])

    def startup(self) -> None:
        # Start-up and no-op builds take tens of milliseconds: many runs even out the noise.
        self.rows.append(
            Row("-", "import", self.repeat([self.python, "-c", "import infrafeed.cli"], 20))
        )
        self.rows.append(Row("-", "--help", self.repeat([self.infrafeed, "--help"], 20)))

    def repeat(self, argv: Sequence[str], count: int) -> tuple[Run, ...]:
        measure(argv)  # warm-up
        return tuple(measure(argv) for _ in range(count))

    def site(self, label: str, entries: Path, count: int | None) -> None:
        runs = self.big_runs if count is not None and count >= 50_000 else self.runs
        base = self.work / label
        out, cache = base / "output", base / "cache"

        def clean() -> None:
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(cache, ignore_errors=True)

        argv = self.build(entries, out, cache)
        clean()
        measure(argv)  # warm-up: the page cache holds the entries, .pyc files exist
        cold = []
        for _ in range(runs):
            clean()
            cold.append(measure(argv))
        self.rows.append(Row(label, "cold", tuple(cold)))
        noop = [
            measure(argv) for _ in range(max(runs, 20 if count is None or count < 50_000 else 0))
        ]
        self.rows.append(Row(label, "noop", tuple(noop)))

        if count is not None:
            # Each run adds the release of the day after the newest one.
            newest = max(p.stem[:10] for p in entries.rglob("*.toml") if p.name != "site.toml")
            day = dt.date.fromisoformat(newest)
            rng = random.Random(f"infrafeed-bench-new-{count}")
            added = []
            for _ in range(runs):
                day = day.fromordinal(day.toordinal() + 1)
                path = entries / f"{day:%Y}" / f"{day.isoformat()}.toml"
                path.parent.mkdir(exist_ok=True)
                path.write_text(release_text(rng, day, 3), encoding="utf-8")
                added.append(measure(argv))
            self.rows.append(Row(label, "incremental", tuple(added)))

        baseline_out = base / "baseline"
        baseline = [self.python, str(BENCH / "baseline.py"), str(entries), str(baseline_out)]
        times = []
        for _ in range(runs):
            shutil.rmtree(baseline_out, ignore_errors=True)
            times.append(measure(baseline))
        self.rows.append(Row(label, "baseline", tuple(times)))
        clean()
        shutil.rmtree(baseline_out, ignore_errors=True)


def table(rows: Sequence[Row]) -> str:
    lines = [
        f"{'size':>8}  {'scenario':<12} {'runs':>4}  {'median s':>9}  {'min s':>8}  "
        f"{'max s':>8}  {'peak RSS MB':>11}  {'written MB':>10}"
    ]
    for row in rows:
        seconds = [r.seconds for r in row.runs]
        lines.append(
            f"{row.size:>8}  {row.scenario:<12} {len(row.runs):>4}  {row.seconds:>9.3f}  "
            f"{min(seconds):>8.3f}  {max(seconds):>8.3f}  {row.rss / 2**20:>11.1f}  "
            f"{row.written / 2**20:>10.1f}"
        )
    return "\n".join(lines)


def ratios(rows: Sequence[Row], sizes: Sequence[int]) -> list[str]:
    found = {(r.size, r.scenario): r for r in rows}
    importing = found[("-", "import")].seconds
    labels = ["shipped"] + [str(n) for n in sizes]

    def each(top: str, bottom: str | None, scale: float | None = None) -> str:
        parts = []
        for label in labels:
            a = found.get((label, top))
            b = found.get((label, bottom)) if bottom else None
            if a is None or (bottom and b is None):
                continue
            denominator = b.seconds if b is not None else (scale or 1.0)
            parts.append(f"{a.seconds / denominator:.2f}@{label}")
        return ",".join(parts)

    extra = []
    per_item = {n: found[(str(n), "cold")].seconds / n for n in sizes if (str(n), "cold") in found}
    if len(per_item) >= 2:
        small, large = sorted(per_item)[-2:]
        extra.append(
            f"per-item cold: {per_item[small] * 1e6:.0f} us@{small}, "
            f"{per_item[large] * 1e6:.0f} us@{large}, ratio {per_item[large] / per_item[small]:.2f}"
        )
    for n in sizes:
        cold, base = found.get((str(n), "cold")), found.get((str(n), "baseline"))
        if cold and base:
            extra.append(
                f"peak RSS@{n}: infrafeed {cold.rss / 2**20:.0f} MB, "
                f"baseline {base.rss / 2**20:.0f} MB"
            )
    extra.append(f"--help: {found[('-', '--help')].seconds * 1000:.0f} ms")
    noop = ",".join(
        f"{found[(label, 'noop')].seconds / importing:.2f}@{label}"
        for label in labels
        if (label, "noop") in found
    )
    extra.append(
        f"cold/baseline={each('cold', 'baseline')} noop/import={noop} "
        f"incremental/cold={each('incremental', 'cold')}"
    )
    return extra


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--items",
        type=int,
        action="append",
        default=[],
        metavar="N",
        help="site size in article changes (repeat for several; default 1000 and 10000)",
    )
    parser.add_argument("--runs", type=int, default=5, help="timed runs per scenario")
    parser.add_argument(
        "--big-runs", type=int, default=2, help="timed runs per scenario from 50,000 items"
    )
    parser.add_argument("--work", type=Path, help="working folder (default: a temporary one)")
    args = parser.parse_args()
    sizes = sorted(args.items or [1000, 10000])

    work = args.work or Path(tempfile.mkdtemp(prefix="infrafeed-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    try:
        bench = Bench(work, args.runs, args.big_runs)
        bench.startup()
        shipped = work / "shipped-entries"
        shutil.rmtree(shipped, ignore_errors=True)
        shutil.copytree(REPO / "entries", shipped)
        bench.site("shipped", shipped, None)
        for n in sizes:
            entries = work / f"entries-{n}"
            shutil.rmtree(entries, ignore_errors=True)
            write_corpus(n, entries)
            bench.site(str(n), entries, n)
            print(f"# {n} items done after {time.monotonic() - started:.0f} s", file=sys.stderr)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print(table(bench.rows))
    for line in ratios(bench.rows, sizes):
        print(line)


if __name__ == "__main__":
    main()
