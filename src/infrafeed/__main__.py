"""``python -m infrafeed``: the same as the ``infrafeed`` command."""

from .cli import run

run()
