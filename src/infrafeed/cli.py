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
from typing import TYPE_CHECKING, Any, TypeVar

import click

from . import __version__
from .clock import SYSTEM, Clock
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

if TYPE_CHECKING:
    from .build import BuildResult

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
      ok: 36 releases, 98 article changes, 23 notes; ...
    """
    from .source.loader import load
    from .source.summary import describe

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
    from .source.newrelease import write_template

    if date_text is None:
        date = _today(entries, SYSTEM)
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
    "--page",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write the changelog page to FILE (e.g. a site's posts folder) instead of below "
    "the output folder.",
)
@click.option(
    "--ping",
    is_flag=True,
    help="Notify the WebSub hub (site.toml [feeds] hub) of every feed that changed. "
    "A hub failure is reported but does not fail the build.",
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIRECTORY",
    show_default=".infrafeed-cache beside the entries folder",
    help="Build cache folder: what each release file gave the last build, so that an "
    "unchanged one is not done again. Only derived data: deleting it makes the next "
    "build slower, never different.",
)
@click.option("--no-cache", is_flag=True, help="Use no build cache.")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Print nothing on success (for cron); errors and warnings still go to stderr.",
)
def build(
    entries: Path,
    out: Path,
    allow_changes: bool,
    lock_wait: float,
    ping: bool,
    page: Path | None,
    cache: Path | None,
    no_cache: bool,
    quiet: bool,
) -> None:
    """Build every feed (RSS, Atom, JSON Feed), the site files and the changelog page.

    Files are replaced atomically and only when their bytes change; a build
    with nothing to change prints "unchanged" and touches no file.

    \b
    Example:
      $ infrafeed build
      wrote 24 files: atom.xml, feed.json, feed.xml, feeds.json, feeds.opml, ...
      $ infrafeed build
      unchanged: 24 files
    """
    from .build import build as run_build

    if no_cache and cache is not None:
        raise click.UsageError("--cache and --no-cache: give one or the other")
    if not no_cache and cache is None:
        # Absolute, so that "--entries ." puts it beside the folder, not in it.
        cache = entries.absolute().parent / ".infrafeed-cache"
    result = run_build(
        entries,
        out,
        cache=cache,
        allow_changes=allow_changes,
        lock_wait=lock_wait,
        ping=ping,
        page=page,
    )
    _report_pings(result, ping, quiet)
    if result.cache_error is not None:
        click.echo(
            f"warning: could not write the build cache ({result.cache_error}); the build is "
            "complete, but the next one will be slower",
            err=True,
        )
    report = result.report
    # Warnings print even with --quiet: each is said once (the file is then
    # forgotten), and it is what a cron job's mail is for.
    for relative in report.kept:
        click.echo(
            f"warning: left {relative} in place: it changed since infrafeed wrote it, "
            "so it is no longer infrafeed's",
            err=True,
        )
    if quiet:
        return
    if report.written:
        click.echo(f"wrote {_files(report.written)}: {', '.join(report.written)}")
    if report.removed:
        click.echo(
            f"removed {_files(report.removed)} of feeds no longer configured: "
            f"{', '.join(report.removed)}"
        )
    if report.unchanged or not report.changed:
        click.echo(f"unchanged: {_files(report.unchanged)}")


def _files(names: Sequence[str]) -> str:
    return f"{len(names)} file{'' if len(names) == 1 else 's'}"


def _report_pings(result: BuildResult, ping: bool, quiet: bool) -> None:
    """Hub failures go to stderr even with --quiet (cron mails them); the build succeeded."""
    if not ping or result.skipped:
        return
    if result.hub is None:
        click.echo("warning: --ping: no hub in site.toml [feeds]; nobody was notified", err=True)
        return
    for note in result.notifications:
        if note.error is not None:
            click.echo(
                f"warning: WebSub hub {result.hub} was not told that {note.topic} changed: "
                f"{note.error}; the feed is published, readers will see it at their next poll",
                err=True,
            )
    told = sum(1 for note in result.notifications if note.error is None)
    if told and not quiet:
        click.echo(f"notified the WebSub hub of {told} changed feeds")


@cli.command("import")
@click.argument("page", type=click.Path(dir_okay=False, path_type=Path))
@entries_option
@click.option("--overwrite", is_flag=True, help="Replace release files that already exist.")
def import_(page: Path, entries: Path, overwrite: bool) -> None:
    """Write release files into the entries folder from a changelog page in Markdown.

    Reads the page `infrafeed build` writes, or a site's own changelog in that
    form. Nothing is written if the page has an error; what could not be mapped
    is reported as a warning with its line. Existing release files are kept
    unless --overwrite is given.

    \b
    Example:
      $ infrafeed import CHANGELOG.md
      wrote entries/2026/2026-11-07.toml: 6 articles, 1 note
      imported 1 release (6 articles, 1 note) from CHANGELOG.md
    """
    from .changelog.importer import import_page

    report = import_page(page, entries, overwrite=overwrite)
    for written in report.written:
        click.echo(
            f"wrote {written.path}: {_count(written.articles, 'article')}, "
            f"{_count(written.notes, 'note')}"
        )
    for warning in report.warnings:
        click.echo(str(warning), err=True)
    warnings = f"; {_count(len(report.warnings), 'warning')}" if report.warnings else ""
    click.echo(
        f"imported {_count(len(report.written), 'release')} "
        f"({_count(report.articles, 'article')}, {_count(report.notes, 'note')}) "
        f"from {page.as_posix()}{warnings}"
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _today(entries: Path, clock: Clock) -> dt.date:
    """Today in the site's time zone (UTC when the settings cannot be read)."""
    import tomllib
    from zoneinfo import ZoneInfo

    zone: dt.tzinfo = dt.UTC
    try:
        settings = tomllib.loads((entries / "site.toml").read_text(encoding="utf-8"))
        zone = ZoneInfo(str(settings["timezone"]))
    except (OSError, ValueError, KeyError, tomllib.TOMLDecodeError):
        pass
    return clock.now().astimezone(zone).date()


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
            import traceback  # only here: importing it costs a tenth of start-up

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
