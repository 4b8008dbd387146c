"""infrafeed's version, in a module of its own: the package root imports the build, and the
build, the cache, the loader and the importer read the version, so it cannot live there."""

__version__ = "0.4.0"
