"""Select: takes the validated releases, gives each feed's items, documents and id guard verdict."""
