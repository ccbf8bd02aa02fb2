"""Who may read a file of a Microsoft Graph source
(:meth:`~ragline.adapters.sources.graph.GraphSource.permissions`), from its effective permissions
(inherited ones included; SharePoint does not say which are).

A permission counts when its ``roles`` hold ``read``, ``write`` or ``owner`` (owners read). A sharing
link of scope ``anonymous`` or ``organization`` — or a grant to SharePoint's "Everyone" / "Everyone
except external users" claims — lets everyone in the namespace read
(:data:`~ragline.domain.sources.EVERYONE`); a ``users`` link its ``grantedToIdentitiesV2``; an
``existingAccess`` link and an expired link grant nothing. A user is named by their ``email`` when
Graph shows it, else by their Microsoft Entra object ``id`` (a SharePoint-only user by the account in
its ``i:0#.f|membership|`` login name); an Entra group by its object ``id`` (what Entra ID tokens carry
in their ``groups`` claim; also when SharePoint shows it only as a ``c:0t.c|tenant|<id>`` or
``c:0o.c|federateddirectoryclaimprovider|<id>`` claim); a SharePoint group (``siteGroup``, meaningful
only inside its site) as ``sharepoint:<display name>``. Principals Ragline cannot carry (a comma, a
control character, over 256 characters) are dropped, and a file naming more than
:data:`~ragline.domain.access.MAX_GROUPS` users or groups is readable by no one (a warning is logged):
dropping readers can only hide a file, never show it. No reader → ``ItemAccess.only()`` (not
indexed); a file gone since → no reader either. The complete set of sharing changes reaches delta only
for an app granted ``Sites.FullControl.All`` (Microsoft's scan guidance); with
``Files.Read.All``/``Sites.Read.All`` alone a re-permissioned file is re-labelled when it next changes
or at the next full listing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from ragline import errors
from ragline.domain.access import MAX_GROUPS, check_principal
from ragline.domain.sources import ItemAccess

_log = logging.getLogger(__name__)

READ_ROLES = frozenset({"read", "write", "owner"})
EVERYONE_LOGINS = ("c:0-.f|rolemanager|spo-grid-all-users", "c:0(.s|true")
"""SharePoint's claims for "Everyone except external users" and "Everyone"."""
MEMBER_LOGIN = "i:0#.f|membership|"
GROUP_LOGINS = ("c:0t.c|tenant|", "c:0o.c|federateddirectoryclaimprovider|")
"""SharePoint's claims for an Entra security group and a Microsoft 365 group (``<id>_o``: its owners)."""


def reads(permission: dict[str, Any]) -> bool:
    """Whether ``permission`` lets its grantees read: a reading role (``read``, ``write``, ``owner``),
    not expired (an expiry that cannot be read does not end it)."""
    roles = permission.get("roles")
    if not isinstance(roles, list) or not READ_ROLES.intersection(r for r in roles if isinstance(r, str)):
        return False
    expires = permission.get("expirationDateTime")
    if isinstance(expires, str) and expires and not expires.startswith("0001-01-01"):
        try:
            moment = datetime.fromisoformat(expires.replace("Z", "+00:00"))
        except ValueError:
            return True
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment > datetime.now(UTC)
    return True


def link_scope(permission: dict[str, Any]) -> str | None:
    """The scope of a sharing link (``anonymous``, ``organization``, ``users``, ``existingAccess``…;
    ``""`` unstated); None when ``permission`` is no link."""
    link = permission.get("link")
    if not isinstance(link, dict):
        return None
    scope = link.get("scope")
    return scope if isinstance(scope, str) else ""


def identity_sets(permission: dict[str, Any]) -> Iterable[dict[str, Any]]:
    """The identity sets ``permission`` grants to (``grantedToV2``, then ``grantedToIdentitiesV2``)."""
    granted = permission.get("grantedToV2")
    if isinstance(granted, dict):
        yield granted
    many = permission.get("grantedToIdentitiesV2")
    if isinstance(many, list):
        yield from (g for g in many if isinstance(g, dict))


def grants_everyone(permission: dict[str, Any]) -> bool:
    """A reading permission open to the whole organization (or the world)."""
    if not reads(permission):
        return False
    if link_scope(permission) in ("anonymous", "organization"):
        return True
    for identities in identity_sets(permission):
        site_user = identities.get("siteUser")
        login = site_user.get("loginName") if isinstance(site_user, dict) else None
        if "user" not in identities and isinstance(login, str) and login.lower().startswith(EVERYONE_LOGINS):
            return True
    return False


def principals(permission: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The users and groups a reading permission names (an ``existingAccess`` link names none)."""
    if not reads(permission) or link_scope(permission) == "existingAccess":
        return [], []
    users: list[str] = []
    groups: list[str] = []
    for identities in identity_sets(permission):
        user, group = identities.get("user"), identities.get("group")
        site_user, site_group = identities.get("siteUser"), identities.get("siteGroup")
        if isinstance(user, dict):
            email, object_id = user.get("email"), user.get("id")
            named = email if isinstance(email, str) and email.strip() else object_id
            if isinstance(named, str) and named.strip():
                users.append(named.strip())
        elif isinstance(group, dict):
            if isinstance(group.get("id"), str) and group["id"]:
                groups.append(group["id"])
        elif isinstance(site_group, dict):
            name = site_group.get("displayName") or site_group.get("loginName")
            if isinstance(name, str) and name.strip():
                groups.append(f"sharepoint:{name.strip()}")
        elif isinstance(site_user, dict) and isinstance(site_user.get("loginName"), str):
            login: str = site_user["loginName"].strip()
            if login.lower().startswith(MEMBER_LOGIN):
                users.append(login[len(MEMBER_LOGIN) :])
            elif login.lower().startswith(GROUP_LOGINS):  # an Entra group granted as a claim
                groups.append(login.rsplit("|", 1)[-1].removesuffix("_o"))
    return users, groups


def access(item_id: str, users: set[str], groups: set[str]) -> ItemAccess:
    """The readers of ``item_id`` from the users and groups its permissions name: those Ragline can
    carry, or no one when they are more than a document carries (a warning is logged)."""
    kept_users, kept_groups = carried(users), carried(groups)
    if len(kept_users) > MAX_GROUPS or len(kept_groups) > MAX_GROUPS:
        _log.warning(
            "a file names more readers than a document can carry: no one reads it",
            extra={"item_id": item_id, "users": len(kept_users), "groups": len(kept_groups)},
        )
        return ItemAccess.only()
    return ItemAccess.only(kept_users, kept_groups)


def carried(names: set[str]) -> list[str]:
    """The ``names`` Ragline can carry as principals (the others dropped: fewer readers, never more)."""
    kept = []
    for principal in names:
        try:
            kept.append(check_principal(principal, "principal"))
        except errors.InvalidRequest:
            continue  # a name Ragline cannot carry: dropped (fewer readers, never more)
    return kept
