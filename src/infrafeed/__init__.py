"""infrafeed: a documentation site's changelog as RSS 2.0, Atom 1.0 and JSON Feed 1.1.

Kept import-light on purpose: ``infrafeed --help`` and a no-op rebuild must not
pay for pydantic, feedgen or Jinja2. Import the working modules directly
(``infrafeed.loader``, ``infrafeed.build``...).
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
