"""Adapters: the production and embedded implementations of the ports, built only by wiring."""
