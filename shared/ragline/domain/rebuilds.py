"""A rebuild's transitions on the namespace record, as pure functions: each takes the namespace as
stored and returns it changed (the caller writes it conditionally on the revision it read).

Every transition but the start applies only to the rebuild it names (its generation, still
``building``): a step of a rebuild that was replaced or failed meanwhile changes nothing.
"""

from __future__ import annotations

from datetime import datetime

from ragline import errors
from ragline.domain.generations import Rebuild
from ragline.domain.tenancy import Namespace


def _with(ns: Namespace, **settings: object) -> Namespace:
    return ns.model_copy(update={"settings": ns.settings.model_copy(update=settings)})


def building(ns: Namespace, generation: int) -> Rebuild:
    """The rebuild of ``generation`` if it is still building; ``Superseded`` otherwise."""
    running = ns.settings.rebuild
    if running is None or running.generation != generation or running.state != "building":
        raise errors.Superseded("the rebuild was replaced or has ended", namespace=ns.namespace_id)
    return running


def started(ns: Namespace, rebuild: Rebuild) -> Namespace:
    return _with(ns, rebuild=rebuild)


def at_step(ns: Namespace, generation: int, step_after: str | None) -> Rebuild:
    """The rebuild still building and still where a step starting from ``step_after`` left it
    (``None``: a step that does not say); ``Superseded`` otherwise — a copy of a step already done."""
    running = building(ns, generation)
    if step_after is not None and running.after != step_after:
        raise errors.Superseded("this reindex step ran already", namespace=ns.namespace_id)
    return running


def leased(
    ns: Namespace, generation: int, *, step_after: str | None, at: datetime, until: datetime
) -> Namespace:
    """The step starting from ``step_after`` taken by one worker until ``until``; a copy arriving
    while another holds it is ``StepBusy`` (retried after the lease: by then done, or its worker dead)."""
    running = at_step(ns, generation, step_after)
    if running.lease_until is not None and at < running.lease_until:
        raise errors.StepBusy(
            f"another worker runs this reindex step until {running.lease_until.isoformat()}",
            namespace=ns.namespace_id,
        )
    return _with(ns, rebuild=running.model_copy(update={"lease_until": until}))


def released(ns: Namespace, generation: int, *, step_after: str | None) -> Namespace:
    """The step's lease ends without progress (it is retried); nothing when the rebuild moved on."""
    try:
        running = at_step(ns, generation, step_after)
    except errors.Superseded:
        return ns
    return _with(ns, rebuild=running.model_copy(update={"lease_until": None}))


def advanced(
    ns: Namespace, generation: int, *, step_after: str | None, after: str, done: int, at: datetime
) -> Namespace:
    """``done`` more documents rebuilt by the step that started from ``step_after``, the last being
    ``after`` (where the next step continues); its lease ends."""
    running = at_step(ns, generation, step_after)
    moved = running.model_copy(
        update={
            "after": after, "documents_done": running.documents_done + done, "progressed_at": at,
            "lease_until": None,
        }
    )  # fmt: skip
    return _with(ns, rebuild=moved)


def switched(ns: Namespace, generation: int, *, step_after: str | None, done: int, at: datetime) -> Namespace:
    """The rebuilt generation serves: its number, model and chunking become the namespace's."""
    running = at_step(ns, generation, step_after)
    ready = running.model_copy(
        update={
            "state": "ready", "documents_done": running.documents_done + done, "finished_at": at,
            "lease_until": None,
        }
    )  # fmt: skip
    return _with(
        ns,
        generation=generation,
        embedding_model=running.embedding_model,
        embedding_dimension=running.embedding_dimension,
        chunking=running.chunking,
        rebuild=ready,
    )


def failed(ns: Namespace, generation: int, *, reason: str, at: datetime) -> Namespace:
    """The rebuild stopped with ``reason``; the served generation is untouched."""
    try:
        running = building(ns, generation)
    except errors.Superseded:
        return ns
    return _with(
        ns, rebuild=running.model_copy(update={"state": "failed", "error": reason, "finished_at": at})
    )
