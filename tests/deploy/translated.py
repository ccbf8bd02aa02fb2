"""template.yaml as CloudFormation sees it: translated offline by ``infra/sam/translate_check.py`` (the
SAM translator ``sam deploy`` runs, plus cfn-lint), then resolved for given parameters with the
rehearsal's evaluator, every resource standing in as its logical id."""

from __future__ import annotations

import json
import re
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

    def violated_rules(self) -> list[str]:
        """The template's ``Rules`` whose condition holds and an assertion fails (CloudFormation refuses
        the deployment before creating anything, with the assertion's description)."""
        violated = []
        for name, rule in self.template.get("Rules", {}).items():
            if "RuleCondition" in rule and not self._evaluate(rule["RuleCondition"]):
                continue
            if not all(self._evaluate(a["Assert"]) for a in rule["Assertions"]):
                violated.append(name)
        return violated

    def references(self, value: Any) -> set[str]:
        """Resources ``value`` names (Ref, GetAtt, Sub), following only the taken branch of each Fn::If."""
        resources = self.template["Resources"]
        if isinstance(value, list):
            return set().union(*(self.references(v) for v in value))
        if not isinstance(value, dict):
            return set()
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return {arg} & set(resources)
            if key == "Fn::GetAtt":
                return {(arg if isinstance(arg, list) else arg.split("."))[0]}
            if key == "Fn::Sub":
                text, local = (arg, {}) if isinstance(arg, str) else arg
                named = {n.split(".")[0] for n in re.findall(r"\$\{([^}!]+)\}", text)}
                return (named & set(resources)) | self.references(local)
            if key == "Fn::If":
                name, yes, no = arg
                return self.references(yes if self.condition(name) else no)
        return set().union(*(self.references(v) for v in value.values()))

    def dependencies(self, logical: str) -> set[str]:
        """Every resource ``logical`` waits for when created: references and DependsOn, transitively."""
        seen: set[str] = set()
        todo = [logical]
        while todo:
            resource = self.template["Resources"][todo.pop()]
            depends = resource.get("DependsOn", [])
            found = self.references(resource.get("Properties", {})) | set(
                [depends] if isinstance(depends, str) else depends
            )
            todo.extend(found - seen)
            seen |= found
        return seen
