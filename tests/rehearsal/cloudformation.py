"""The translated template as a deployed stack would see it: intrinsics resolved against the rehearsal's
own resources, each function's settings, and an IAM evaluator for its role's policies.

Only what Ragline's template uses is implemented (Ref, Fn::GetAtt, Fn::Sub, Fn::If, Fn::Join,
Fn::Select, Fn::Split, Fn::FindInMap, the condition functions); anything else raises, so a template
change cannot silently evade the check.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any

REGION = "us-east-1"
ACCOUNT = "123456789012"
PARTITION = "aws"
STACK_NAME = "ragline-rehearsal"
"""The stack's name as ``Ref AWS::StackName`` gives it (a world names its own)."""
STACK_ID = (
    f"arn:aws:cloudformation:{REGION}:{ACCOUNT}:stack/ragline-rehearsal/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
)

Context = tuple[tuple[str, str], ...]
"""A call's request context: (condition key, value) pairs, e.g. ``bedrock:InferenceProfileArn``."""


class Unresolvable(Exception):
    pass


@dataclass
class Stack:
    template: dict[str, Any]
    parameters: dict[str, str]
    refs: dict[str, str]
    """Logical id → what ``Ref`` gives for the rehearsal's stand-in (a table name, a secret ARN…)."""
    attributes: dict[str, str] = field(default_factory=dict)
    """``Logical.Attr`` → value (``UsageTable.Arn``, ``IngestDeadLetterQueue.QueueName``…)."""

    def __post_init__(self) -> None:
        declared = self.template.get("Parameters", {})
        self.values = {name: str(spec.get("Default", "")) for name, spec in declared.items()}
        self.values.update({"AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::Partition": PARTITION})
        self.values["AWS::URLSuffix"] = "amazonaws.com"
        self.values["AWS::StackId"] = STACK_ID
        self.values["AWS::StackName"] = STACK_NAME
        self.values.update(self.parameters)  # a test may stand in another region: {"AWS::Region": ...}

    # -- intrinsics ------------------------------------------------------------------------------
    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [v for v in (self.resolve(x) for x in value) if v is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref":
                return self._ref(arg)
            if key == "Fn::GetAtt":
                logical, attr = arg if isinstance(arg, list) else arg.split(".", 1)
                return self._attribute(logical, attr)
            if key == "Fn::Sub":
                return self._sub(arg)
            if key == "Fn::If":
                name, yes, no = arg
                return self.resolve(yes if self.condition(name) else no)
            if key == "Fn::Join":
                sep, parts = arg
                return sep.join(str(p) for p in self.resolve(parts))
            if key == "Fn::Select":
                index, items = arg
                return self.resolve(items)[int(self.resolve(index))]
            if key == "Fn::Split":
                sep, text = arg
                return str(self.resolve(text)).split(sep)
            if key == "Fn::FindInMap":
                mapping, top, second = (self.resolve(x) for x in arg)
                try:
                    return self.template["Mappings"][mapping][top][second]
                except KeyError as exc:
                    raise Unresolvable(f"FindInMap {mapping}/{top}/{second}: no such key") from exc
            if key.startswith("Fn::") or key == "Condition":
                raise Unresolvable(f"{key} is not supported by the rehearsal")
        return {k: v for k, v in ((k, self.resolve(v)) for k, v in value.items()) if v is not NO_VALUE}

    def condition(self, name: str) -> bool:
        return bool(self._evaluate(self.template["Conditions"][name]))

    def _evaluate(self, expr: Any) -> Any:
        if isinstance(expr, dict) and len(expr) == 1:
            ((key, arg),) = expr.items()
            if key == "Fn::Equals":
                a, b = (self._evaluate(x) for x in arg)
                return str(a) == str(b)
            if key == "Fn::Not":
                return not self._evaluate(arg[0])
            if key == "Fn::And":
                return all(self._evaluate(x) for x in arg)
            if key == "Fn::Or":
                return any(self._evaluate(x) for x in arg)
            if key == "Fn::Contains":
                items, item = arg
                return str(self._evaluate(item)) in [str(self._evaluate(x)) for x in items]
            if key == "Condition":
                return self.condition(arg)
        return self.resolve(expr)

    def _ref(self, name: str) -> Any:
        if name == "AWS::NoValue":
            return NO_VALUE
        if name in self.values:
            return self.values[name]
        if name in self.refs:
            return self.refs[name]
        raise Unresolvable(f"Ref {name} has no stand-in in the rehearsal")

    def _attribute(self, logical: str, attr: str) -> str:
        key = f"{logical}.{attr}"
        if key in self.attributes:
            return self.attributes[key]
        raise Unresolvable(f"GetAtt {key} has no stand-in in the rehearsal")

    def _sub(self, arg: Any) -> str:
        text, local = (arg, {}) if isinstance(arg, str) else (arg[0], self.resolve(arg[1]))

        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in local:
                return str(local[name])
            if "." in name and not name.startswith("AWS::"):
                return self._attribute(*name.split(".", 1))
            return str(self._ref(name))

        return re.sub(r"\$\{([^}!]+)\}", one, text)

    # -- functions -------------------------------------------------------------------------------
    def function(self, logical: str) -> FunctionSpec:
        props = self.template["Resources"][logical]["Properties"]
        role = self.template["Resources"][props["Role"]["Fn::GetAtt"][0]]["Properties"]
        statements: list[dict[str, Any]] = []
        for policy in self.resolve(role.get("Policies", [])):  # a statement without a Sid: its policy's name
            statements.extend(
                {"Sid": policy.get("PolicyName", "?"), **st} for st in policy["PolicyDocument"]["Statement"]
            )
        env = self.resolve(props.get("Environment", {}).get("Variables", {}))
        return FunctionSpec(
            logical=logical,
            handler=props["Handler"],
            layers=[str(x) for x in self.resolve(props.get("Layers", []))],
            environment={k: str(v) for k, v in env.items()},
            statements=statements,
            timeout=int(props.get("Timeout", 3)),
            memory=int(props.get("MemorySize", 128)),
            tracing=str(props.get("TracingConfig", {}).get("Mode", "PassThrough")),
            managed_policies=[str(arn) for arn in self.resolve(role.get("ManagedPolicyArns", []))],
        )


class _NoValue:
    def __repr__(self) -> str:
        return "AWS::NoValue"


NO_VALUE: Any = _NoValue()


@dataclass
class FunctionSpec:
    logical: str
    handler: str
    layers: list[str]
    environment: dict[str, str]
    statements: list[dict[str, Any]]
    timeout: int
    memory: int
    tracing: str
    managed_policies: list[str] = field(default_factory=list)
    """The role's AWS managed policies (ARNs): what SAM attaches (logs, tracing, an event source's)."""

    def allows(self, action: str, resource: str, context: Context = ()) -> bool:
        """Whether an ``Allow`` statement of the role covers ``action`` on ``resource`` (no Deny is used)."""
        return any(statement_allows(st, action, resource, context) for st in self.statements)


def listed(value: Any) -> list[Any]:
    """A policy field as a list: IAM lets one value stand for a list of one (``Action``, ``Resource``,
    a condition's values, a principal's ARNs); absent is none."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def statement_allows(st: dict[str, Any], action: str, resource: str, context: Context = ()) -> bool:
    """Whether one ``Allow`` statement covers ``action`` on ``resource``. ``*`` and ``?`` match across
    ``:`` as in IAM (``bedrock:*::foundation-model/…`` is any Region). A statement with a ``Condition``
    grants only a call whose request ``context`` satisfies it."""
    if st.get("Effect") != "Allow":
        return False
    return (
        any(fnmatch.fnmatchcase(action.lower(), a.lower()) for a in listed(st["Action"]))
        and any(fnmatch.fnmatchcase(resource, r) for r in listed(st["Resource"]))
        and _satisfied(st.get("Condition", {}), dict(context))
    )


def _satisfied(condition: dict[str, Any], context: dict[str, str]) -> bool:
    """IAM's condition block, for the operators the template uses (``StringEquals``, ``StringLike``, and
    ``ForAllValues:StringLike`` on a single-valued key such as ``dynamodb:LeadingKeys``); a key the
    request does not carry fails the test (stricter than IAM's ``ForAllValues`` on an absent key, which
    passes). Any other operator raises, so it cannot pass unchecked."""
    for operator, tests in condition.items():
        if operator not in ("StringEquals", "StringLike", "ForAllValues:StringLike"):
            raise Unresolvable(f"condition operator {operator} is not supported by the rehearsal")
        for key, wanted in tests.items():
            allowed = listed(wanted)
            value = context.get(key)
            if value is None:
                return False
            if operator == "StringEquals" and value not in allowed:
                return False
            if operator != "StringEquals" and not any(fnmatch.fnmatchcase(value, p) for p in allowed):
                return False
    return True


@dataclass(frozen=True)
class AwsCall:
    """One AWS action a function performed, with the resource IAM would check it against."""

    function: str
    action: str
    resource: str
    context: Context = ()
