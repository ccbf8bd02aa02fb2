"""What the rehearsal reads off the translated template before it drives anything: the API's routes
and the function each one invokes, the event sources, which routes stream, and the stack resolved
with the domain the template creates (the branch without ``OpenSearchEndpoint``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tests.rehearsal.cloudformation import ACCOUNT, PARTITION, REGION, Stack

API = "RaglineApi"
STREAMING = "/response-streaming-invocations"
_TARGET = re.compile(r"/functions/\$\{(?P<fn>[A-Za-z0-9]+?)(?:Alias[A-Za-z0-9]+|\.Arn)?\}/")
"""The function an integration URI invokes: ``${XFunctionAliaslive}`` or ``${XFunction.Arn}``."""
_METHODS = {"get", "put", "post", "delete", "patch", "head", "options"}


@dataclass(frozen=True)
class Route:
    """One API route: what a rehearsal step calls, the function it reaches, whether it streams."""

    method: str
    path: str
    function: str
    streams: bool


def api_routes(translated: dict[str, Any]) -> dict[tuple[str, str], Route]:
    """(METHOD, path) → the route, from the API's OpenAPI body; an integration the rehearsal cannot
    read (no Lambda function target) raises, so a new kind of route cannot pass unchecked."""
    paths = translated["Resources"][API]["Properties"]["Body"]["paths"]
    out = {}
    for path, operations in paths.items():
        for method, operation in operations.items():
            if method not in _METHODS:
                continue
            uri = operation["x-amazon-apigateway-integration"]["uri"]
            text = uri["Fn::Sub"] if isinstance(uri, dict) else uri
            target = _TARGET.search(text if isinstance(text, str) else text[0])
            if target is None:
                raise AssertionError(f"{method.upper()} {path}: no Lambda function in its integration {uri}")
            key = (method.upper(), path)
            out[key] = Route(key[0], path, target.group("fn"), str(text).endswith(STREAMING))
    return out


def event_sources(translated: dict[str, Any]) -> dict[str, str]:
    """``sqs:<queue>`` (or another source's logical id) → the function its event source mapping
    invokes, from the translated template's ``AWS::Lambda::EventSourceMapping`` resources."""
    out = {}
    for resource in translated["Resources"].values():
        if resource["Type"] != "AWS::Lambda::EventSourceMapping":
            continue
        props = resource["Properties"]
        source = props["EventSourceArn"]["Fn::GetAtt"][0]
        kind = "sqs" if translated["Resources"][source]["Type"] == "AWS::SQS::Queue" else source
        fn = re.sub(r"Alias[A-Za-z0-9]+$", "", props["FunctionName"]["Ref"])
        out[f"{kind}:{source}"] = fn
    return out


def uncovered(table: dict[Any, str], template: dict[Any, Any]) -> list[str]:
    """The differences between a rehearsal's table (route or source → the step that calls it) and the
    template's: each a line saying which side lacks what."""
    missing = [f"{k}: in the template, no rehearsal step calls it" for k in template if k not in table]
    stale = [f"{k}: in the rehearsal's table, not in the template" for k in table if k not in template]
    return sorted(missing + stale)


def created_domain_stack(existing: Stack, domain_name: str = "ragline-rehearsal") -> tuple[Stack, str]:
    """The same stand-ins with no ``OpenSearchEndpoint``: the template creates ``OpenSearchDomain``.
    Its ``Ref``/``GetAtt`` answer as CloudFormation would for a domain of ``DomainName`` (when the
    template names it) or a generated name. Returns the stack and the created domain's ARN."""
    domain = existing.template["Resources"]["OpenSearchDomain"]
    params = {**existing.parameters, "OpenSearchEndpoint": "", "ExistingOpenSearchDomainArn": ""}
    probe = Stack(existing.template, params, existing.refs, existing.attributes)
    named = domain.get("Properties", {}).get("DomainName")
    name = str(probe.resolve(named)) if named else domain_name
    arn = f"arn:{PARTITION}:es:{REGION}:{ACCOUNT}:domain/{name}"
    endpoint = f"search-{name}-rehearsal.{REGION}.es.amazonaws.com"
    attrs = {
        **existing.attributes,
        "OpenSearchDomain.Arn": arn,
        "OpenSearchDomain.DomainArn": arn,
        "OpenSearchDomain.DomainEndpoint": endpoint,
    }
    stack = Stack(existing.template, params, {**existing.refs, "OpenSearchDomain": name}, attrs)
    assert stack.condition("CreateOpenSearchDomain"), "no OpenSearchEndpoint, yet no domain is created"
    return stack, arn
