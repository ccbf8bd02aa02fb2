"""Ragline: serverless, multi-tenant agentic retrieval.

Importing the package does no I/O and pulls in no heavy SDK; adapters are built lazily by
:mod:`ragline.wiring`.
"""

__version__ = "0.1.0"
