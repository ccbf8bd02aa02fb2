"""Pure types and algorithms: no I/O, no vendor SDKs."""
