"""Use cases the handlers and the CLI call."""
