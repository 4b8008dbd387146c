"""The ``infrafeed`` command: a thin layer over the library.

:func:`main` is the one place that turns exceptions into messages and exit codes. Heavy
modules load inside the commands, so ``infrafeed --help`` starts fast.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import os
import re
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from ._version import __version__
from .clock import SYSTEM
from .errors import (
    DataError,
    GuardError,
    InfraFeedError,
    LockBusy,
    OutOfDate,
    PublishError,
    count,
    error_lines,
)

if TYPE_CHECKING:
    from .build import BuildResult
    from .serve import Outcome

EXIT_OK, EXIT_DATA, EXIT_USAGE, EXIT_GUARD, EXIT_LOCKED, EXIT_WRITE, EXIT_OUTDATED = range(7)
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130

_EXIT_CODES_HELP = f"""\b
Exit codes:
  {EXIT_OK}    success ("unchanged" too; serve stopped by SIGINT or SIGTERM)
  {EXIT_DATA}    invalid entries or settings, or a refused action
  {EXIT_USAGE}    wrong command-line usage
  {EXIT_GUARD}    the id guard refused: published items or feeds would go or be re-dated,
       new items would be only in an archive, or [ids] changed
  {EXIT_LOCKED}    another build holds the output folder's lock
  {EXIT_WRITE}    the output could not be written (disk full, I/O, permissions)
  {EXIT_OUTDATED}    build --locked: published-ids.txt would have to change
  {EXIT_INTERNAL}   internal error (a bug: please report it)
  {EXIT_INTERRUPTED}  interrupted (SIGINT or SIGTERM); the output is whole, old or new"""


class _Path(click.Path):
    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == "":  # Path("") is ".": an unset variable in a crontab would name the cwd
            self.fail("is empty (an unset variable?)", param, ctx)
        return super().convert(value, param, ctx)


_FOLDER = _Path(file_okay=False, path_type=Path)
ENTRIES = click.option("--entries", type=_FOLDER, default=Path("entries"), show_default=True,
                       help="Folder with site.toml and the release files.")  # fmt: skip


class Interrupted(Exception):
    """SIGINT or SIGTERM: a build stops cleanly, its output whole."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=_EXIT_CODES_HELP)
@click.version_option(__version__, "-V", "--version", prog_name="infrafeed")
def cli() -> None:
    """Publish the AIInfraGuide changelog (entries/*.toml) as RSS, Atom and JSON feeds."""


@cli.command()
@ENTRIES
def check(entries: Path) -> None:
    """Validate the entries (published-ids.txt too) and print what they hold.

    \b
    Example:
      $ infrafeed check
      ok: 36 releases, 98 article changes, 23 notes; ...
    """
    from .publish.manifest import committed_ids
    from .source.files import read_entries
    from .source.loader import dated_ahead, describe, validate

    snapshot = read_entries(entries, __version__)
    for warning in snapshot.warnings:  # before the problems: a file left out may be why
        _say(f"warning: {warning}", err=True)
    changelog = validate(snapshot)
    committed_ids(snapshot.published_ids)  # the id guard's memory: build refuses it damaged
    dates = [(rf.path, rf.date) for rf in changelog.releases]
    for warning in dated_ahead(changelog.site, dates, SYSTEM.now()):
        _say(f"warning: {warning}", err=True)
    _say(describe(changelog))


@cli.command()
@ENTRIES
@click.option("--date", "date_text", metavar="YYYY-MM-DD",
              help="The release date (default: today in the site's time zone).")  # fmt: skip
def new(entries: Path, date_text: str | None) -> None:
    """Write a commented template for a new release file; never overwrite one.

    \b
    Example:
      $ infrafeed new --date 2026-11-30
      wrote entries/2026/2026-11-30.toml
    """
    from zoneinfo import ZoneInfo

    from .source.loader import load_site
    from .source.models import EARLIEST
    from .source.newrelease import write_template

    if date_text is None:  # today in the site's time zone: not UTC's, a day behind at night
        date = SYSTEM.now().astimezone(ZoneInfo(load_site(entries).timezone)).date()
    else:
        try:
            # fromisoformat reads 20261130; \d would take other scripts' digits
            if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", date_text):
                raise ValueError("write it as YYYY-MM-DD, e.g. 2026-11-30")
            date = dt.date.fromisoformat(date_text)
        except ValueError as exc:
            message = f"{date_text!r} is not a date: {exc}"
            raise click.BadParameter(message, param_hint="--date") from None
        if date < EARLIEST:  # check would refuse the file
            message = f"{date_text} is before {EARLIEST}: a release is dated {EARLIEST} or later"
            raise click.BadParameter(message, param_hint="--date")
    _say(f"wrote {write_template(entries, date).as_posix()}")


@cli.command()
@click.option("--site", is_flag=True, help="The schema of site.toml, not of a release file.")
def schema(site: bool) -> None:
    """Print the JSON Schema of a release file, for editors that complete and check TOML.

    entries/schema/ holds it; a release file's first line, #:schema ../schema/release.json,
    names it to taplo (VS Code's Even Better TOML).

    \b
    Example:
      $ infrafeed schema > entries/schema/release.json
      $ infrafeed schema --site > entries/schema/site.json
    """
    from .source.schema import release_schema, site_schema

    # Bytes: UTF-8 whatever the locale's encoding, and the text as it is, its newline its own.
    _say((site_schema() if site else release_schema()).encode(), nl=False)


def _seconds(_: click.Context, __: click.Parameter, value: float) -> float:
    if not math.isfinite(value) or value < 0:
        raise click.BadParameter(f"{value} is not a number of seconds from 0 up")
    return value


def _file(_: click.Context, __: click.Parameter, value: str | None) -> Path | None:
    if value is not None and value.endswith("/"):  # Path("x/") is Path("x"), a file's name
        raise InfraFeedError(f"{value}: names a folder (it ends in /); give --page the path of "
                             "a file, e.g. --page docs/posts/update-log.md")  # fmt: skip
    return None if value is None else Path(value)


@cli.command()
@ENTRIES
@click.option("--out", type=_FOLDER, default=Path("output"), show_default=True,
              help="Output folder, served at site.toml [feeds] url.")  # fmt: skip
@click.option("--page", type=_Path(readable=False), metavar="FILE", callback=_file,
              help="Write the changelog page to FILE (a site's posts folder, outside the "
              "entries and the output) instead of below the output.")  # fmt: skip
@click.option("--allow-changes", is_flag=True,
              help="Confirm that items already published may disappear or change their date, "
              "new items go only to an archive, feeds that published go, or [ids] "
              "changed.")  # fmt: skip
@click.option("--locked", "locked_ids", is_flag=True,
              help="Refuse to change the entries' published-ids.txt (for CI: the record must be "
              "committed with the entries).")  # fmt: skip
@click.option("--lock-wait", type=float, default=30.0, show_default=True, metavar="SECONDS",
              callback=_seconds,
              help="How long to wait for another build on the output folder.")  # fmt: skip
@click.option("--ping", is_flag=True,
              help="Tell the WebSub hub (site.toml [feeds] hub) of every feed changed since it "
              "was last told (builds without --ping record theirs); a failure is reported, and "
              "the next build with --ping retries.")  # fmt: skip
@click.option("--cache", type=_Path(path_type=Path), metavar="DIRECTORY",  # a file: a warning
              show_default=".infrafeed-cache beside the entries folder",
              help="Build cache folder: what each release file gave the last build. Derived data "
              "only: deleting it makes the next build slower, never different.")  # fmt: skip
@click.option("--no-cache", is_flag=True, help="Use no build cache.")
@click.option("-q", "--quiet", is_flag=True, help="Print nothing on success (for cron); errors "
              "and warnings go to stderr.")  # fmt: skip
def build(entries: Path, cache: Path | None, no_cache: bool, quiet: bool, **options: Any) -> None:
    """Build every feed (RSS, Atom, JSON Feed), the site files and the changelog page.

    The output folder is replaced whole, in one step; files whose bytes did not
    change keep their date. A build with nothing to change prints "unchanged".

    \b
    Example:
      $ infrafeed build
      wrote 27 files: atom.xml, favicon.png, feed.json, feed.xml, feeds.json, ...
      $ infrafeed build
      unchanged: 27 files
    """
    from .build import build as run

    if no_cache and cache is not None:
        raise click.UsageError("--cache and --no-cache: give one or the other")
    if not no_cache and cache is None:
        # Absolute, so that "--entries ." puts it beside the folder, not in it.
        cache = entries.absolute().parent / ".infrafeed-cache"
    result = run(entries, cache=cache, **options)
    # Warnings print even with --quiet: it is what a cron job's mail is for.
    warnings = [*result.warnings]
    if result.cache_error is not None:
        warnings.append(f"could not write the build cache ({result.cache_error}); the build "
                        "is complete, but the next one will be slower")  # fmt: skip
    warnings += [f"left {relative} in place: it changed since infrafeed wrote it, so it is "
                 "no longer infrafeed's" for relative in result.report.kept]  # fmt: skip
    if options["ping"] and result.hub is None:
        warnings.append("--ping: no hub in site.toml [feeds]; nobody was notified")
    warnings += [f"WebSub hub {result.hub} was not told that {note.topic} changed "
                 f"({note.error}); the next build with --ping tells it"
                 for note in result.notifications if note.error is not None]  # fmt: skip
    for warning in warnings:
        _say(f"warning: {warning}", err=True)
    if quiet:
        return
    report, told = result.report, sum(1 for note in result.notifications if note.error is None)
    if report.written:
        _say(f"wrote {count(len(report.written), 'file')}: {', '.join(report.written)}")
    if report.removed:
        _say(f"removed {count(len(report.removed), 'file')} infrafeed no longer makes: "
             f"{', '.join(report.removed)}")  # fmt: skip
    if report.unchanged or not (report.written or report.removed):
        _say(f"unchanged: {count(len(report.unchanged), 'file')}")
    if told:
        _say(f"notified the WebSub hub of {count(told, 'changed feed')}")


@cli.command("import")
@click.argument("page", type=_Path(dir_okay=False, path_type=Path))
@ENTRIES
@click.option("--overwrite", is_flag=True, help="Replace release files that already exist.")
def import_(page: Path, entries: Path, overwrite: bool) -> None:
    """Write release files into the entries folder from a changelog page in Markdown.

    Reads the page `infrafeed build` writes, or a site's own changelog. Nothing
    is written if the page has an error; what could not be mapped is reported
    as a warning with its line. Existing release files are kept unless
    --overwrite is given.

    \b
    Example:
      $ infrafeed import CHANGELOG.md
      wrote entries/2026/2026-11-07.toml: 6 articles, 1 note
      imported 1 release (6 articles, 1 note) from CHANGELOG.md
    """
    from .changelog.importer import import_page

    report = import_page(page, entries, overwrite=overwrite)
    for written in report.written:
        _say(f"wrote {written.path}: {count(written.articles, 'article')}, "
             f"{count(written.notes, 'note')}")  # fmt: skip
    for warning in report.warnings:
        _say(str(warning), err=True)
    warnings = f"; {count(len(report.warnings), 'warning')}" if report.warnings else ""
    _say(f"imported {count(len(report.written), 'release')} ({count(report.articles, 'article')}"
         f", {count(report.notes, 'note')}) from {page.as_posix()}{warnings}")  # fmt: skip


@cli.command()
@ENTRIES
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="The port on 127.0.0.1; 0 picks a free one.")  # fmt: skip
@click.option("--allow-changes", is_flag=True,
              help="As for build: preview items already published going or re-dated.")  # fmt: skip
def serve(entries: Path, port: int, allow_changes: bool) -> None:
    """Preview the feeds and pages on 127.0.0.1, rebuilt on every save.

    Builds into a temporary folder, never the output folder, and writes nothing into the
    entries (no published-ids.txt, no build cache). While the entries have an error, every
    page shows it (status 500) and the feeds stay those of the last good build. Ctrl-C or
    SIGTERM stops it, with exit code 0, and removes the folder.

    \b
    Example:
      $ infrafeed serve --port 0
      built 17 files into /tmp/infrafeed-serve-k2j4/site
      serving http://127.0.0.1:40311/ (Ctrl-C stops)
      rebuilt: 2 files changed: feed.xml, index.html
    """
    import threading

    from .serve import Preview

    # Stopping is asked of the preview, not raised wherever it is: a build under way finishes
    # (into the temporary folder), and a second Ctrl-C cannot cut the removal of the folder short.
    stop = threading.Event()
    stops = (signal.SIGINT, signal.SIGTERM)
    handlers = {signum: signal.signal(signum, lambda *_: stop.set()) for signum in stops}
    try:
        with Preview(entries, port, allow_changes=allow_changes, stop=stop) as preview:
            if (result := _shown(preview.first)) is not None:
                _say(f"built {count(len(result.report.written), 'file')} into {preview.out}")
            _say(f"serving {preview.url} (Ctrl-C stops)")
            for outcome in preview.rebuilds():
                if (result := _shown(outcome)) is not None:
                    changed = [*result.report.written, *result.report.removed]
                    _say(f"rebuilt: {count(len(changed), 'file')} changed: {', '.join(changed)}"
                         if changed else "rebuilt: nothing changed")  # fmt: skip
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
    _say("stopped; the temporary folder is removed")  # how a preview ends: not a failure


def _shown(outcome: Outcome) -> BuildResult | None:
    """Print a preview build's errors or warnings (as build does); its result, if it has one."""
    for line in outcome.errors:
        _say(line, err=True)
    # The build cache is the preview's own: a failure to write it costs the next rebuild time.
    for warning in outcome.result.warnings if outcome.result else ():
        _say(f"warning: {warning}", err=True)
    return outcome.result


def _say(text: str | bytes, *, err: bool = False, nl: bool = True) -> None:
    """Print a line; a closed or full stdout never turns a finished job into a failure."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # closed, or gone
        click.echo(text, err=err, nl=nl)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code instead of exiting (testable)."""
    args = list(sys.argv[1:] if argv is None else argv)
    writes = args[:1] in (["build"], ["import"], ["new"])
    try:
        # click returns --help's exit code; its errors carry theirs (usage 2, else 1)
        result = cli.main(args, prog_name="infrafeed", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except (KeyboardInterrupt, Interrupted, click.Abort):
        after = {  # what is true of what each command writes (new: one file, whole)
            "build": "; the output is as it was before, or wholly new",
            # importer.py writes one release file after another
            "import": "; release files are written one at a time, each whole: those written "
            "before the interruption are kept; import again with --overwrite to write them all",
        }.get(args[0] if args else "", "")
        _say(f"infrafeed: interrupted{after}", err=True)
        return EXIT_INTERRUPTED
    except (DataError, GuardError) as exc:
        for line in error_lines(exc):  # the build's warnings, then the problems
            _say(line, err=True)
        if isinstance(exc, GuardError):
            _say(f"infrafeed: {exc}; nothing was written. If this is intended, run again with "
                 "--allow-changes.", err=True)  # fmt: skip
            return EXIT_GUARD
        _say(f"infrafeed: {exc}{'; nothing was written' if writes else ''}", err=True)
        return EXIT_DATA
    except (InfraFeedError, OSError) as exc:
        for note in getattr(exc, "__notes__", ()):
            _say(note, err=True)
        _say(f"infrafeed: {exc}", err=True)
        codes: dict[type, int] = {
            LockBusy: EXIT_LOCKED,
            OutOfDate: EXIT_OUTDATED,
            PublishError: EXIT_WRITE,
        }
        return codes.get(type(exc), EXIT_WRITE if isinstance(exc, OSError) else EXIT_DATA)
    except Exception as exc:
        if os.environ.get("INFRAFEED_DEBUG"):
            import traceback  # only here: start-up would pay for it every run

            traceback.print_exc()
        _say(f"infrafeed: internal error: {type(exc).__name__}: {exc} (set INFRAFEED_DEBUG=1 "
             "for the traceback, and please report it)", err=True)  # fmt: skip
        return EXIT_INTERNAL
    return int(result or 0)


def _terminate(signum: int, _: FrameType | None) -> None:
    raise Interrupted(signal.Signals(signum).name)


def run() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _terminate)
    code = main()
    try:
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        # A reader that went away (| head -1) or a full disk: the job is done; say nothing
        # more, and keep Python from failing on the flush at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.exit(code)
