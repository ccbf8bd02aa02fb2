"""A Microsoft Graph source's folder scope (:mod:`ragline.adapters.sources.graph`): which folders lie
below the configured folder.

Delta answers carry no ``parentReference.path`` (only the parent's ``id``), so a folder source keeps, in
its cursor, the ids (8-byte digests) of the folders below its folder; the scope folder is found by its
path when a full listing starts and followed by its id afterwards (a rename or move of it keeps the
scope). A parent the cursor does not know is walked up to the scope folder or the root
(``GET …/items/{id}?$select=id,root,parentReference``, once per folder per step). In a listing of
changes a file moved out of the folder is a ``delete``, one moved in an ``upsert``.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ragline import errors
from ragline.adapters.sources.graph_http import GraphClient, quote_id
from ragline.adapters.sources.graph_state import ListingState, digest

MAX_DEPTH = 100
"""Folder levels walked up from a folder to the scope folder or the root."""


class FolderScope:
    """The folder scope of one step: the cursor's folders (in a
    :class:`~ragline.adapters.sources.graph_state.ListingState`) and what this step learnt besides —
    folders outside the scope folder, folders found below it by walking up, the folders above it."""

    def __init__(self, client: GraphClient, drive: str, folder: str) -> None:
        self._client = client
        self._drive = drive
        self._folder = folder
        self._outside: set[str] = set()
        """Folders known (this step) to be outside the scope folder."""
        self._walked_in: set[str] = set()
        """Folders found below the scope folder by walking up, in a listing of changes (this step)."""
        self._scope_ancestors: set[str] | None = None

    def find(self, until: float) -> str:
        """The scope folder's id (``""``: the whole drive), looked up by its path."""
        if not self._folder:
            return ""
        body = self._client.json(
            f"{self._drive}/root:/{quote(self._folder, safe='/')}", until, missing_ok=True
        )
        if body is None or not isinstance(body.get("id"), str) or not is_folder(body):
            raise errors.DependencyFailed(
                f"the folder /{self._folder} is not a folder of the drive", folder=f"/{self._folder}"
            )
        return str(body["id"])

    def enter(self, state: ListingState, folder_id: str) -> None:
        """``folder_id`` is below the scope folder."""
        state.inside.add(digest(folder_id))
        self._outside.discard(folder_id)

    def leave(self, state: ListingState, folder_id: str) -> None:
        """``folder_id`` is not (or no longer) below the scope folder."""
        state.inside.discard(digest(folder_id))
        self._walked_in.discard(folder_id)
        self._outside.add(folder_id)

    def inside(self, state: ListingState, folder_id: str, until: float) -> bool:
        """Whether ``folder_id`` is the scope folder or below it (walked up when not known)."""
        if not folder_id:
            return False
        if folder_id == state.scope or digest(folder_id) in state.inside or folder_id in self._walked_in:
            return True
        if folder_id in self._outside:
            return False
        chain = [folder_id]
        verdict = False
        for _ in range(MAX_DEPTH):
            parent = self._parent_of(chain[-1], until)
            if not parent or parent in self._outside:
                break
            if parent == state.scope or digest(parent) in state.inside or parent in self._walked_in:
                verdict = True
                break
            chain.append(parent)
        for folder in chain:
            if not verdict:
                self._outside.add(folder)
            elif state.full:
                state.inside.add(digest(folder))
            else:  # its own entry in the feed (a folder moved in) still has its subtree read
                self._walked_in.add(folder)
        return verdict

    def ancestors(self, state: ListingState, until: float) -> set[str]:
        """The folders above the scope folder (whose sharing its files may inherit)."""
        if self._scope_ancestors is None:
            found: set[str] = set()
            current = state.scope or ""
            for _ in range(MAX_DEPTH):
                parent = self._parent_of(current, until)
                if not parent:
                    break
                found.add(parent)
                current = parent
            self._scope_ancestors = found
        return self._scope_ancestors

    def _parent_of(self, folder_id: str, until: float) -> str:
        """The id of the folder holding ``folder_id`` (``""``: it is the root, or gone)."""
        meta = self._client.json(
            f"{self._drive}/items/{quote_id(folder_id)}?$select=id,root,parentReference",
            until,
            missing_ok=True,
        )
        return parent(meta) if meta is not None and "root" not in meta else ""


def is_folder(item: dict[str, Any]) -> bool:
    """Whether a drive item is a folder (or the drive's root)."""
    return "folder" in item or "root" in item


def parent(item: dict[str, Any] | None) -> str:
    """The id of the folder holding ``item`` (``""``: none said)."""
    reference = item.get("parentReference") if item else None
    found = reference.get("id") if isinstance(reference, dict) else None
    return found if isinstance(found, str) else ""
