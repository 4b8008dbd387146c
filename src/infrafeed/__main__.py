"""``python -m infrafeed``: the same as the ``infrafeed`` command."""

from .cli import run

if __name__ == "__main__":
    run()
