"""Who may read a Confluence page, from the read restrictions the listing gives (the connector:
:mod:`ragline.adapters.sources.confluence`).

Confluence lets a user see a page when they pass its own read restriction and every ancestor's (each
*restricted level* names users and groups; an unrestricted level lets everyone through). Ragline's
readers are a union of users and groups, so the mapping is conservative: a user survives only when
named at every restricted level, a group likewise (users and groups separately: a user reading through
a group at one level and by name at another is not kept). No restricted level → everyone in the
namespace (:data:`~ragline.domain.sources.EVERYONE`). **Space permissions are not mapped**: a tenant
points a source at spaces every reader of the namespace may read. Nobody surviving →
``ItemAccess.only()`` (the sync does not index the page). A user is named by their email when
Confluence shows it (profile visibility), else by their ``accountId``; a group by its name. Principals
Ragline cannot carry (a comma, a control character, over 256 characters) are dropped, and a page with
more than :data:`~ragline.domain.access.MAX_GROUPS` surviving users or groups is readable by no one (a
warning is logged): dropping readers can only hide a page, never show it. Restriction lists Confluence
truncates (very long ones) are read as given: a subset, so again only fewer readers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NamedTuple

from ragline import errors
from ragline.domain.access import MAX_GROUPS, check_principal
from ragline.domain.sources import EVERYONE, ItemAccess

_log = logging.getLogger(__name__)


class Level(NamedTuple):
    """One restricted level (the page or an ancestor): the principals its read restriction names."""

    users: frozenset[str]
    groups: frozenset[str]


NOBODY = Level(frozenset(), frozenset())
"""A level no one passes (an ancestor whose restrictions cannot be read)."""


class Unlisted(Exception):
    """The listing left out what a page's readers are decided by: the page fails alone."""


def page_access(
    page_id: str, result: dict[str, Any], ancestor_level: Callable[[dict[str, Any]], Level | None] | None
) -> ItemAccess:
    """The readers of the page a search ``result`` describes: its restrictions and its ancestors', those
    expanded inline or, with ``ancestor_level``, read one by one (the CONFCLOUD-77618 fallback).
    :class:`Unlisted` when the result lacks them."""
    if "restrictions" not in result:
        raise Unlisted("Confluence listed the page without its read restrictions")
    levels = [read_level(result.get("restrictions"))]
    ancestors = result.get("ancestors", [])
    if not isinstance(ancestors, list):
        raise Unlisted("Confluence listed the page's ancestors in an unknown shape")
    for ancestor in ancestors:
        if not isinstance(ancestor, dict):
            raise Unlisted("Confluence listed the page's ancestors in an unknown shape")
        if ancestor_level is not None:
            levels.append(ancestor_level(ancestor))
        elif "restrictions" not in ancestor:
            raise Unlisted("Confluence listed the page's ancestors without their read restrictions")
        else:
            levels.append(read_level(ancestor.get("restrictions")))
    restricted = [level for level in levels if level is not None]
    if not restricted:
        return EVERYONE
    users = frozenset.intersection(*(level.users for level in restricted))
    groups = frozenset.intersection(*(level.groups for level in restricted))
    if len(users) > MAX_GROUPS or len(groups) > MAX_GROUPS:
        _log.warning(
            "a Confluence page names more readers than a document carries: readable by no one",
            extra={"page": page_id, "users": len(users), "groups": len(groups)},
        )
        return ItemAccess.only()
    return ItemAccess.only(sorted(users), sorted(groups))


def read_level(restrictions: Any) -> Level | None:
    """``restrictions.read``'s principals; None when the level names none (it is not restricted)."""
    read = restrictions.get("read") if isinstance(restrictions, dict) else None
    inner = read.get("restrictions") if isinstance(read, dict) else None
    if not isinstance(inner, dict):
        return None
    users = _entries(inner.get("user"))
    groups = _entries(inner.get("group"))
    if not users and not groups:
        return None
    return Level(
        frozenset(p for p in (_user(u) for u in users) if p),
        frozenset(p for p in (_principal(g.get("name")) for g in groups) if p),
    )


def _entries(value: Any) -> list[dict[str, Any]]:
    results = value.get("results") if isinstance(value, dict) else None
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def _user(user: dict[str, Any]) -> str:
    email = user.get("email")
    if isinstance(email, str) and email.strip():
        return _principal(email.strip())
    return _principal(user.get("accountId"))


def _principal(value: Any) -> str:
    """A principal Ragline can carry, or ``""`` (dropped: one reader fewer, never one more)."""
    try:
        return check_principal(value, "principal")
    except errors.InvalidRequest:
        return ""
