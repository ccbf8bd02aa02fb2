"""Connectors: the places documents live, each a :class:`ragline.ports.Source`."""
