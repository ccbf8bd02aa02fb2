"""The process environment: the only module that reads ``os.environ``.

:meth:`ragline.config.Settings.from_env` builds the settings from it. The authorizer reads the few
values it needs through :func:`env_values` alone (:func:`ragline.wiring.api_key_lookup`): the
settings model would cost it pydantic's import on every cold start.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, MutableMapping

ENV_ALIASES: dict[str, tuple[str, ...]] = {
    "aws_region": ("AWS_REGION", "AWS_DEFAULT_REGION"),
    "openai_api_key": ("OPENAI_API_KEY",),
    "openai_base_url": ("OPENAI_BASE_URL",),
}
"""Besides ``RAGLINE_<FIELD>``, these standard variables are honoured (the RAGLINE_ one wins)."""
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")
"""The BLAS libraries' thread-count variables (numpy's wheels bundle OpenBLAS; MKL and Apple's
Accelerate read the others), read once, when numpy first loads its BLAS."""
DEFAULT_HOME = ".ragline"
"""Folder holding all embedded state, unless ``RAGLINE_HOME`` names another."""


def env_values(names: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The set, non-empty values of the settings ``names``: ``RAGLINE_<NAME>``, else an alias."""
    env = os.environ if environ is None else environ
    values: dict[str, str] = {}
    for name in names:
        for key in (f"RAGLINE_{name.upper()}", *ENV_ALIASES.get(name, ())):
            if env.get(key):
                values[name] = env[key]
                break
    return values


def snapstart_init(environ: Mapping[str, str] | None = None) -> bool:
    """True while Lambda initialises a function for a SnapStart snapshot: it sets
    ``AWS_LAMBDA_INITIALIZATION_TYPE=snap-start`` then (``on-demand`` otherwise)."""
    env = os.environ if environ is None else environ
    return env.get("AWS_LAMBDA_INITIALIZATION_TYPE") == "snap-start"


def one_blas_thread(environ: MutableMapping[str, str] | None = None) -> None:
    """One BLAS thread per process, unless the operator chose a number: each request's vector math is
    small (one query against a scope's matrix), and a BLAS thread team per call on a busy 2-core host
    made concurrent semantic searches on the embedded store 2-170 times slower than one thread
    (docs/benchmarks.md, "One BLAS thread per search"). Call it where a process starts, before numpy's
    first import (the CLI's ``main``, which ``serve`` runs under); Lambda's come from template.yaml."""
    env = os.environ if environ is None else environ
    for name in BLAS_THREADS:
        env.setdefault(name, "1")
