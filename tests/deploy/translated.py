"""template.yaml as CloudFormation sees it: translated offline by ``infra/sam/translate_check.py`` (the
SAM translator ``sam deploy`` runs, plus cfn-lint), then resolved for given parameters with the
rehearsal's evaluator, every resource standing in as its logical id."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.rehearsal.cloudformation import Stack, Unresolvable

ROOT = Path(__file__).parents[2]


def translate(template: Path, out: Path) -> dict[str, Any]:
    """Translate ``template`` with the SAM venv (made by ``infra/sam/env.sh`` when missing)."""
    script = (
        'source infra/sam/env.sh && HOME="$sam_home" '
        '"$venv/bin/python" infra/sam/translate_check.py "$1" --emit "$2"'
    )
    command = ["bash", "-c", script, "translate", str(template), str(out)]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    translated: dict[str, Any] = json.loads(out.read_text())
    return translated


class StandInStack(Stack):
    """A stack whose resources are their own stand-ins: ``Ref X`` is ``X``, ``GetAtt X.Arn`` is ``X.Arn``."""

    def __init__(self, template: dict[str, Any], parameters: dict[str, str]) -> None:
        super().__init__(template, parameters, {name: name for name in template["Resources"]})

    def _attribute(self, logical: str, attr: str) -> str:
        if logical not in self.template["Resources"]:
            raise Unresolvable(f"GetAtt {logical}.{attr}: no such resource")
        return f"{logical}.{attr}"

    def exists(self, logical: str) -> bool:
        """Whether the resource is created for these parameters (its ``Condition``, if any, holds)."""
        condition = self.template["Resources"][logical].get("Condition")
        return condition is None or self.condition(condition)
