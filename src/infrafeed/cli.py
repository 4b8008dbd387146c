"""The ``infrafeed`` command: a thin layer over the library.

Each command parses its options, calls one library function and prints the
result. :func:`main` is the one place that turns exceptions into messages
and exit codes (documented in README.md and in ``infrafeed --help``).

Heavy modules (pydantic models, feedgen) are imported inside the commands,
so ``infrafeed --help`` starts fast.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from . import __version__
from .errors import DataError, GuardError, InfraFeedError, LockBusy, PublishError

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2
EXIT_GUARD = 3
EXIT_LOCKED = 4
EXIT_WRITE = 5
EXIT_INTERNAL = 70

EXIT_CODES_HELP = f"""\b
Exit codes:
  {EXIT_OK}   success (including "unchanged")
  {EXIT_DATA}   invalid entries or settings, or a refused action
  {EXIT_USAGE}   wrong command-line usage
  {EXIT_GUARD}   the id guard refused to drop or re-date published items
  {EXIT_LOCKED}   another build holds the output lock
  {EXIT_WRITE}   the output could not be written (previous output intact)
  {EXIT_INTERNAL}  internal error (a bug: please report it)"""

F = TypeVar("F", bound=Callable[..., Any])


def entries_option(func: F) -> F:
    return click.option(
        "--entries",
        type=click.Path(file_okay=False, path_type=Path),
        default=Path("entries"),
        show_default=True,
        help="Folder with site.toml and the release files.",
    )(func)


@click.group(
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, "-V", "--version", prog_name="infrafeed")
def cli() -> None:
    """Publish the AIInfraGuide changelog (entries/*.toml) as RSS, Atom and JSON feeds."""


@cli.command()
@entries_option
def check(entries: Path) -> None:
    """Validate the entries and print what they hold.

    \b
    Example:
      $ infrafeed check
      ok: 36 releases, 98 article changes, 22 notes; ...
    """
    from .loader import load
    from .summary import describe

    click.echo(describe(load(entries)))


@cli.command()
@entries_option
@click.option(
    "--date",
    "date_text",
    metavar="YYYY-MM-DD",
    help="The release date (default: today in the site's time zone).",
)
def new(entries: Path, date_text: str | None) -> None:
    """Write a commented template for a new release file.

    Refuses to overwrite an existing file.

    \b
    Example:
      $ infrafeed new --date 2026-11-30
      wrote entries/2026/2026-11-30.toml
    """
    from .template import write_template

    if date_text is None:
        date = _today(entries)
    else:
        try:
            date = dt.date.fromisoformat(date_text)
        except ValueError:
            raise click.BadParameter(
                f"{date_text!r} is not a date like 2026-11-30", param_hint="--date"
            ) from None
    click.echo(f"wrote {write_template(entries, date).as_posix()}")


@cli.command()
@entries_option
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("output"),
    show_default=True,
    help="Output folder, served as the feeds' public URL (site.toml [feeds] url).",
)
@click.option(
    "--allow-changes",
    is_flag=True,
    help="Confirm that items already published may disappear or change their date.",
)
@click.option(
    "--lock-wait",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="How long to wait for another build on the same output folder.",
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path(".infrafeed-cache"),
    show_default=True,
    help="Folder where builds keep what makes the next one fast; safe to delete.",
)
@click.option("--no-cache", is_flag=True, help="Build everything, and keep no cache.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on success (for cron).")
def build(
    entries: Path,
    out: Path,
    allow_changes: bool,
    lock_wait: float,
    cache: Path,
    no_cache: bool,
    quiet: bool,
) -> None:
    """Build every feed (RSS, Atom, JSON Feed) from the entries into the output folder.

    Files are replaced atomically and only when their bytes change; a build
    with nothing to change prints "unchanged" and touches no file.

    \b
    Example:
      $ infrafeed build
      wrote 15 files: atom.xml, feed.json, feed.xml, modules/cuda/atom.xml, ...
      $ infrafeed build
      unchanged: 15 files
    """
    from .build import build as run_build

    result = run_build(
        entries,
        out,
        allow_changes=allow_changes,
        lock_wait=lock_wait,
        cache=None if no_cache else cache,
    )
    if quiet:
        return
    report = result.report
    if not report.changed:
        click.echo(f"unchanged: {len(report.unchanged)} files")
    if report.written:
        click.echo(f"wrote {len(report.written)} files: {', '.join(report.written)}")
        if report.unchanged:
            click.echo(f"unchanged: {len(report.unchanged)} files")
    if report.removed:
        click.echo(
            f"removed {len(report.removed)} files of feeds no longer configured: "
            f"{', '.join(report.removed)}"
        )
    for relative in report.kept:
        click.echo(
            f"warning: left {relative} in place: it changed since infrafeed wrote it", err=True
        )


def _today(entries: Path) -> dt.date:
    """Today in the site's time zone (UTC when the settings cannot be read)."""
    import tomllib
    from zoneinfo import ZoneInfo

    zone: dt.tzinfo = dt.UTC
    try:
        settings = tomllib.loads((entries / "site.toml").read_text(encoding="utf-8"))
        zone = ZoneInfo(str(settings["timezone"]))
    except (OSError, ValueError, KeyError, tomllib.TOMLDecodeError):
        pass
    return dt.datetime.now(zone).date()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code instead of exiting (testable)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = cli.main(args, prog_name="infrafeed", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE if isinstance(exc, click.UsageError) else EXIT_DATA
    except click.Abort:
        click.echo("infrafeed: aborted", err=True)
        return EXIT_DATA
    except DataError as exc:
        for problem in exc.problems:
            click.echo(str(problem), err=True)
        click.echo(f"infrafeed: {exc}; nothing was written", err=True)
        return EXIT_DATA
    except GuardError as exc:
        for violation in exc.violations:
            click.echo(violation, err=True)
        click.echo(
            f"infrafeed: {exc}; nothing was written. If this is intended, "
            "run again with --allow-changes.",
            err=True,
        )
        return EXIT_GUARD
    except LockBusy as exc:
        click.echo(f"infrafeed: {exc}", err=True)
        return EXIT_LOCKED
    except PublishError as exc:
        click.echo(f"infrafeed: {exc}", err=True)
        return EXIT_WRITE
    except InfraFeedError as exc:
        click.echo(f"infrafeed: {exc}", err=True)
        return EXIT_DATA
    except Exception as exc:
        if os.environ.get("INFRAFEED_DEBUG"):
            import traceback

            traceback.print_exc()
        click.echo(
            f"infrafeed: internal error: {type(exc).__name__}: {exc} "
            "(set INFRAFEED_DEBUG=1 for the traceback, and please report it)",
            err=True,
        )
        return EXIT_INTERNAL
    return int(result or 0)


def run() -> None:
    sys.exit(main())
