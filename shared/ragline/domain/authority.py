"""What a key may hand on: the one rule of key issuance, and which changes are tenant-wide.

A key's reach is its scopes and its namespace allow-list (empty: every namespace of the tenant). A key
may issue another key only if the new key's reach lies inside its own — issuance never widens:

* every requested scope is one the issuer holds;
* an unrestricted issuer may grant any allow-list (or none: every namespace);
* an allow-listed issuer may grant only a non-empty subset of its own list — never "every namespace".

Tenant-wide changes (which namespace is the default, creating namespaces every unrestricted key then
sees, tenant settings) need an unrestricted issuer: an allow-listed key must not change what keys with
a wider reach see. Pure and standard-library only, so any layer (and a property test) can ask it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple, Protocol


class Reach(Protocol):
    """Anything with scopes and an allow-list: a principal, a stored key's grant, a requested key."""

    @property
    def scopes(self) -> frozenset[str]: ...

    @property
    def namespaces(self) -> frozenset[str]: ...


class Grant(NamedTuple):
    """A requested key's reach."""

    scopes: frozenset[str]
    namespaces: frozenset[str] = frozenset()
    """Empty: every namespace of the tenant."""

    @classmethod
    def of(cls, scopes: Iterable[str], namespaces: Iterable[str] = ()) -> Grant:
        return cls(frozenset(scopes), frozenset(namespaces))


class Widening(NamedTuple):
    """How a requested key would reach further than its issuer (at least one field is non-empty/true)."""

    scopes: frozenset[str]
    """Requested scopes the issuer does not hold."""
    namespaces: frozenset[str]
    """Requested namespaces outside the issuer's allow-list."""
    every_namespace: bool
    """An allow-listed issuer asked for a key without an allow-list (every namespace)."""


def widening(issuer: Reach, requested: Reach) -> Widening | None:
    """``None`` when ``issuer`` may issue a key of reach ``requested``; otherwise how it widens."""
    scopes = requested.scopes - issuer.scopes
    if unrestricted(issuer):
        outside: frozenset[str] = frozenset()
        every = False
    else:
        outside = requested.namespaces - issuer.namespaces
        every = not requested.namespaces
    if scopes or outside or every:
        return Widening(scopes=scopes, namespaces=outside, every_namespace=every)
    return None


def may_issue(issuer: Reach, requested: Reach) -> bool:
    """Issuance never widens: ``requested`` lies inside ``issuer``'s reach."""
    return widening(issuer, requested) is None


def unrestricted(key: Reach) -> bool:
    """No allow-list: the key reaches every namespace of its tenant."""
    return not key.namespaces


def may_change_tenant_wide(key: Reach) -> bool:
    """Tenant-wide changes (the default namespace, new namespaces, tenant settings) need an
    unrestricted admin: they change what every other key of the tenant sees."""
    return "admin" in key.scopes and unrestricted(key)
