"""Load and validate: takes the entries folder, gives the validated, frozen ``Changelog``."""
