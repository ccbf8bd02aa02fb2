"""Loaded by the function's interpreter in the deploy rehearsal (the runtime stand-in's folder holds
it): records every AWS API call botocore makes (its ``before-parameter-build`` event: the caller's own
parameters, before serialisation) — service, operation and the parameters IAM keys on —
to the JSON-lines file named by ``REHEARSAL_CALL_LOG``, so the rehearsal can check each one against
the function's role in the translated template. It patches ``botocore.session`` only when the
function itself imports it (whichever copy that is), so it changes no import. Never shipped."""

import json
import os
import re
import sys

# The runtime reaches the RIE's Runtime API through the rehearsal's proxy, which adds the invocation's
# trace header to each event as Lambda's Runtime API does (the RIE drops it: its tracer is a no-op).
if os.environ.get("REHEARSAL_RUNTIME_API"):
    os.environ["AWS_LAMBDA_RUNTIME_API"] = os.environ["REHEARSAL_RUNTIME_API"]

_LOG = os.environ.get("REHEARSAL_CALL_LOG")
_KEYS = (
    "TableName",
    "IndexName",
    "Bucket",
    "Key",
    "VersionId",
    "SecretId",
    "Name",
    "GroupName",
    "modelId",
    "rerankingConfiguration",
    "QueueUrl",
    "Prefix",
)


def _tables_of(params):
    """What IAM keys on in the calls that name their tables inside: batch calls (``RequestItems``, table
    name → requests: the names only) and transactions (``TransactItems``: each item's kind and table),
    the partition key a put or a query names, ``DeleteObjects``' keys and ``PutEvents``' buses; never the
    items or the events themselves."""
    out = {}
    if "RequestItems" in params:  # each table's keys' families (``KEY#``…), for dynamodb:LeadingKeys
        out["RequestItems"] = {
            table: sorted({_family(k) for k in _batch_keys(requests)})
            for table, requests in params["RequestItems"].items()
        }
    if "TransactItems" in params:
        out["TransactItems"] = [
            {
                kind: {"TableName": body.get("TableName"), "pk": _family(body.get("Key") or body.get("Item"))}
                for kind, body in item.items()
            }
            for item in params["TransactItems"]
        ]
    # IAM's dynamodb:LeadingKeys: an item's partition key (not the item), a query's pk value.
    if isinstance(params.get("Item"), dict) and "pk" in params["Item"]:
        out["Item"] = {"pk": params["Item"]["pk"]}
    match = re.search(r"\bpk\s*=\s*(:\w+)", params.get("KeyConditionExpression") or "")
    if match:
        out["KeyConditionExpression"] = params["KeyConditionExpression"]
        out["ExpressionAttributeValues"] = {
            match.group(1): params.get("ExpressionAttributeValues", {}).get(match.group(1))
        }
    if isinstance(params.get("Target"), dict) and "RoleArn" in params["Target"]:  # a schedule's role
        out["Target"] = {"RoleArn": params["Target"]["RoleArn"]}
    if "Entries" in params and isinstance(params["Entries"], list):  # PutEvents: each entry's bus only
        out["Entries"] = [{"EventBusName": e.get("EventBusName", "default")} for e in params["Entries"]]
    if "Delete" in params and isinstance(params["Delete"], dict):
        out["Delete"] = {
            "Objects": [
                {k: o[k] for k in ("Key", "VersionId") if k in o} for o in params["Delete"]["Objects"]
            ]
        }
    return out


def _family(key):
    """A key's partition-key family (``KEY#``, ``TENANT#``…: what the roles' LeadingKeys conditions
    name), never the rest of the key."""
    pk = (key or {}).get("pk", {}).get("S", "") if isinstance(key, dict) else ""
    return pk.split("#", 1)[0] + "#" if "#" in pk else "?"


def _batch_keys(requests):
    if isinstance(requests, dict):  # BatchGetItem: {"Keys": [...]}
        return requests.get("Keys", [])
    return [  # BatchWriteItem: [{"PutRequest": {"Item"}} | {"DeleteRequest": {"Key"}}]
        body.get("Item") or body.get("Key") for r in requests for body in r.values()
    ]


def _record(model, params, **_):
    entry = {
        "service": model.service_model.service_name,
        "operation": model.name,
        "params": {**{k: params[k] for k in _KEYS if k in params}, **_tables_of(params)},
    }
    with open(_LOG, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, default=str) + "\n")


def _patch(module):
    init = module.Session.__init__

    def session_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.register("before-parameter-build", _record)

    module.Session.__init__ = session_init


class _WhenBotocoreSessionLoads:
    def find_spec(self, name, path=None, target=None):
        if name != "botocore.session":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


if _LOG:
    sys.meta_path.insert(0, _WhenBotocoreSessionLoads())
