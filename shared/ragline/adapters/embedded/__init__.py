"""The embedded backend: SQLite files and local folders, no servers."""
