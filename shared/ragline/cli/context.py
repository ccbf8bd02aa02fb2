"""What every ``ragline`` command runs with and how it ends: the deployment's settings, the containers
it made (their webhook events are delivered when the command ends), and the one way a failure ends a
command (``error [code]: message`` on stderr, exit 2; with ``--json``, the API's error body on stdout).

This module imports no command module: every command module imports it, and ``app`` only assembles.
Heavy modules (pydantic's errors, the container) are imported inside the functions so ``--help``
stays instant.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from ragline.config import Settings
    from ragline.wiring import Container

made: list[Container] = []
"""The containers this command made (see :func:`deliver_when_done`)."""


class Output:
    """How this command prints: ``json`` is set by its ``--json`` option (:data:`ragline.cli.options.Json`)
    as the option is parsed, so a failure anywhere in the command prints the API's error body."""

    json = False


def use_json(on: bool) -> bool:
    """``--json``'s callback: this command's results, and its failures, print as JSON on stdout."""
    Output.json = on
    return on


def deliver_when_done(ctx: typer.Context) -> None:
    """When the command ends, succeeded or failed, its due webhook events are delivered: the outbox's
    relay thread dies with the process, so a short command would exit before it sent them."""
    made.clear()

    def deliver() -> None:
        while made:
            made.pop().deliver_pending_events()

    ctx.call_on_close(deliver)


def build_container(home: Path | None) -> Container:
    """The deployment's container for this command, remembered so its events go out at the end."""
    from ragline.wiring import Container

    container = Container(load_settings(home))
    made.append(container)
    return container


def load_settings(home: Path | None) -> Settings:
    """The environment's settings; an invalid value ends the command with a message naming its
    variable and what it accepts (``configuration_error``, exit 2), not a traceback."""
    from pydantic import ValidationError

    from ragline.config import Settings
    from ragline.errors import ConfigurationError

    try:
        return Settings.from_env(home=home) if home is not None else Settings.from_env()
    except ValidationError as exc:
        problems = [f"RAGLINE_{str(e['loc'][0]).upper()}: {e['msg']}" for e in exc.errors()[:5] if e["loc"]]
        raise fail(ConfigurationError("invalid settings: " + "; ".join(problems))) from exc


def fail(exc: Exception) -> typer.Exit:
    """A Ragline error as the command's end, exit 2: its code and message on stderr or, with ``--json``,
    the API's error body (``{"error": {"code", "message", "details"}}``) on stdout. Any other exception
    is a bug and is raised as it is, traceback and all."""
    from ragline.errors import RaglineError

    if isinstance(exc, RaglineError):
        if Output.json:
            from ragline.cli.output import print_error

            print_error(exc)
        else:
            typer.secho(f"error [{exc.code}]: {exc.message}", err=True, fg="red")
        return typer.Exit(2)
    raise exc


def refuse(message: str, option: str | None = None) -> Exception:
    """A bad option value found by the command itself: click's usage error (exit 2) or, with
    ``--json``, the same refusal as an invalid request in the API's error body (exit 2)."""
    if Output.json:
        return fail(invalid(message))
    return typer.BadParameter(message, param_hint=option)


def invalid(message: str) -> Exception:
    """An invalid request (for :func:`fail`), without importing the errors module up front."""
    from ragline.errors import InvalidRequest

    return InvalidRequest(message)


def as_ragline(exc: Exception) -> Exception:
    """A bad argument as the one error: pydantic's problems as ``field: message``, else the last line."""
    from pydantic import ValidationError

    from ragline.errors import InvalidRequest, RaglineError

    if isinstance(exc, RaglineError):
        return exc
    if isinstance(exc, ValidationError):
        problems = [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5]]
        return InvalidRequest("; ".join(problems))
    return InvalidRequest(str(exc).splitlines()[-1].strip())
