"""The changelog page: takes releases, gives its Markdown; takes a page, gives release files."""
