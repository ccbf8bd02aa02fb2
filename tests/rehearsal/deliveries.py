"""What AWS services deliver into the stack's queues, and whether each queue's resource policy lets
them: S3's notifications into the ingestion queue, every EventBridge rule's targets and its dead-letter
queue. A service is no IAM role of the account: only the queue's policy can let it send, and where it
does not, S3 refuses the notification configuration while EventBridge drops the event without a word
(its dead-letter queue then stays empty, and its alarm quiet). moto enforces none of it, so the
template is read: each delivery needs a statement naming the service, ``sqs:SendMessage`` on the queue,
and the sender's ARN as ``aws:SourceArn`` (no other bucket or rule may use the grant)."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from tests.rehearsal.cloudformation import ACCOUNT, PARTITION, REGION, Stack, listed


@dataclass(frozen=True)
class Delivery:
    service: str
    queue: str
    """The queue's logical id."""
    source: Any
    """The sender's ARN, unresolved (the rule's ``GetAtt``, the bucket's name ``Sub``)."""
    what: str


def deliveries(template: dict[str, Any]) -> list[Delivery]:
    """Every service delivery the template sets up into one of its queues."""
    out = []
    for logical, resource in template["Resources"].items():
        props = resource.get("Properties", {})
        if resource["Type"] == "AWS::Events::Rule":
            rule = {"Fn::GetAtt": [logical, "Arn"]}
            for target in props.get("Targets", []):
                for what, arn in (("target", target["Arn"]), ("dead-letter queue", _dlq(target))):
                    if _queue(template, arn):
                        out.append(
                            Delivery("events.amazonaws.com", _queue(template, arn), rule, f"{logical} {what}")
                        )
        if resource["Type"] == "AWS::S3::Bucket":
            bucket = {"Fn::Sub": ["arn:${AWS::Partition}:s3:::${Name}", {"Name": props.get("BucketName")}]}
            for config in props.get("NotificationConfiguration", {}).get("QueueConfigurations", []):
                if _queue(template, config["Queue"]):
                    out.append(
                        Delivery("s3.amazonaws.com", _queue(template, config["Queue"]), bucket, logical)
                    )
    return out


def _dlq(target: dict[str, Any]) -> Any:
    return target.get("DeadLetterConfig", {}).get("Arn")


def _queue(template: dict[str, Any], arn: Any) -> str:
    """The logical id of the stack's queue an ARN names (``GetAtt <queue>.Arn``), else ''."""
    if isinstance(arn, dict) and "Fn::GetAtt" in arn:
        logical = arn["Fn::GetAtt"][0]
        if template["Resources"].get(logical, {}).get("Type") == "AWS::SQS::Queue":
            return str(logical)
    return ""


def refused(stack: Stack) -> list[str]:
    """One line per delivery no queue policy of the template allows (none at all: the queue's
    delivery fails or is dropped)."""
    template = stack.template
    services = {"AWS::Events::Rule": "events", "AWS::SQS::Queue": "sqs"}
    stand_in = {
        f"{name}.Arn": f"arn:{PARTITION}:{services[r['Type']]}:{REGION}:{ACCOUNT}:{name}"
        for name, r in template["Resources"].items()
        if r["Type"] in services
    }
    resolver = Stack(template, stack.parameters, stack.refs, {**stand_in, **stack.attributes})
    policies: dict[str, list[dict[str, Any]]] = {}
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::SQS::QueuePolicy":
            document = resolver.resolve(resource["Properties"]["PolicyDocument"])
            for queue in resource["Properties"]["Queues"]:
                policies.setdefault(queue["Ref"], []).extend(document["Statement"])
    lines = []
    for d in deliveries(template):
        queue_arn = str(resolver.resolve({"Fn::GetAtt": [d.queue, "Arn"]}))
        source = str(resolver.resolve(d.source))
        if not any(_lets(st, d.service, queue_arn, source) for st in policies.get(d.queue, [])):
            lines.append(f"{d.what}: no policy of queue {d.queue} lets {d.service} send from {source}")
    return lines


def _lets(st: dict[str, Any], service: str, queue_arn: str, source: str) -> bool:
    principal = st.get("Principal", {})
    services = principal.get("Service", []) if isinstance(principal, dict) else []
    condition = st.get("Condition", {})
    source_arns = [
        v
        for operator in ("ArnEquals", "ArnLike", "StringEquals")
        for v in listed(condition.get(operator, {}).get("aws:SourceArn"))
    ]
    return (
        st.get("Effect") == "Allow"
        and service in listed(services)
        and any(fnmatch.fnmatchcase("sqs:SendMessage", a) for a in listed(st["Action"]))
        and any(fnmatch.fnmatchcase(queue_arn, r) for r in listed(st["Resource"]))
        and source in source_arns
    )
