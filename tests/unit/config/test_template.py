"""Structural checks of the SAM template (template.yaml) that need no AWS tooling.

Full validation (SAM translator + cfn-lint) is `infra/sam/validate`; it is not
run from pytest. These tests only read template.yaml as YAML and the handler
sources with `ast` (nothing is imported).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cfn_tables import CfnLoader, load_template

pytestmark = pytest.mark.unit

REPO_ROOT = Path(__file__).resolve().parents[3]
TEMPLATE_PATH = REPO_ROOT / "template.yaml"

LAYER_ID = "RaglineLayer"
FUNCTION_TYPE = "AWS::Serverless::Function"
LAYER_TYPE = "AWS::Serverless::LayerVersion"


TEMPLATE = load_template()
RESOURCES: dict[str, dict[str, Any]] = TEMPLATE.get("Resources", {})
GLOBAL_FUNCTION: dict[str, Any] = (TEMPLATE.get("Globals") or {}).get("Function") or {}
FUNCTION_IDS = sorted(rid for rid, res in RESOURCES.items() if res.get("Type") == FUNCTION_TYPE)


def function_property(function_id: str, name: str) -> Any:
    """A function property, falling back to Globals.Function (SAM semantics for scalars)."""
    props = RESOURCES[function_id].get("Properties") or {}
    return props.get(name, GLOBAL_FUNCTION.get(name))


def function_layers(function_id: str) -> list[Any]:
    """Layers as SAM resolves them: Globals.Function.Layers + the function's own Layers."""
    props = RESOURCES[function_id].get("Properties") or {}
    return list(GLOBAL_FUNCTION.get("Layers") or []) + list(props.get("Layers") or [])


def handler_source(function_id: str) -> tuple[Path, str]:
    """(path of the handler module, handler function name) for a zip Python function."""
    code_uri = function_property(function_id, "CodeUri")
    handler = function_property(function_id, "Handler")
    assert isinstance(code_uri, str) and code_uri, f"{function_id}: CodeUri must be a local path"
    assert isinstance(handler, str) and "." in handler, f"{function_id}: Handler must be 'module.function'"
    module, func = handler.rsplit(".", 1)
    return REPO_ROOT / code_uri / (module.replace(".", "/") + ".py"), func


def top_level_names(source: str, filename: str) -> set[str]:
    """Names bound at module level: def/async def/class, assignments and imports."""
    names: set[str] = set()
    for node in ast.parse(source, filename=filename).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    return names


def test_template_is_a_sam_template() -> None:
    assert TEMPLATE.get("AWSTemplateFormatVersion") == "2010-09-09"
    assert TEMPLATE.get("Transform") == "AWS::Serverless-2016-10-31"


def test_loader_understands_short_form_tags() -> None:
    doc = yaml.load(
        "a: !Ref X\nb: !GetAtt Fn.Arn\nc: !Sub 'x-${Y}'\nd: !Join [',', [a, b]]\n",
        Loader=CfnLoader,
    )
    assert doc == {
        "a": {"Ref": "X"},
        "b": {"Fn::GetAtt": ["Fn", "Arn"]},
        "c": {"Fn::Sub": "x-${Y}"},
        "d": {"Fn::Join": [",", ["a", "b"]]},
    }


def test_a_template_is_parsed_once_per_version_of_its_file_and_each_caller_gets_a_copy(
    tmp_path: Path,
) -> None:
    path = tmp_path / "template.yaml"
    path.write_text("a: !Ref X\n")
    first = load_template(path)
    first["a"]["Ref"] = "changed by a caller"
    assert load_template(path) == {"a": {"Ref": "X"}}
    path.write_text("a: !Ref Yz\n")  # a new version of the file
    assert load_template(path) == {"a": {"Ref": "Yz"}}


def test_layer_exists_with_python312() -> None:
    layer = RESOURCES.get(LAYER_ID)
    assert layer is not None, f"{LAYER_ID} missing from template.yaml"
    assert layer["Type"] == LAYER_TYPE
    assert "python3.12" in layer["Properties"]["CompatibleRuntimes"]


def test_template_defines_functions() -> None:
    # Guards the parametrized tests below against silently running on nothing.
    assert FUNCTION_IDS, f"no {FUNCTION_TYPE} resources in template.yaml"


WEB_ADAPTER_IDS = [f for f in FUNCTION_IDS if function_property(f, "Handler") == "run.sh"]
ZIP_HANDLER_IDS = [f for f in FUNCTION_IDS if f not in WEB_ADAPTER_IDS]


@pytest.mark.parametrize("function_id", WEB_ADAPTER_IDS)
def test_web_adapter_function_starts_an_asgi_app(function_id: str) -> None:
    """Behind the Lambda Web Adapter: run.sh starts uvicorn on ``app:app``, streaming responses."""
    code = REPO_ROOT / str(function_property(function_id, "CodeUri"))
    assert "uvicorn" in (code / "run.sh").read_text() and "app:app" in (code / "run.sh").read_text()
    assert "app" in top_level_names((code / "app.py").read_text(), "app.py")
    env = RESOURCES[function_id]["Properties"]["Environment"]["Variables"]
    assert (
        env["AWS_LWA_INVOKE_MODE"] == "response_stream" and env["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    )


@pytest.mark.parametrize("function_id", ZIP_HANDLER_IDS)
def test_function_handler_exists(function_id: str) -> None:
    path, func = handler_source(function_id)
    assert path.is_file(), f"{function_id}: handler module {path.relative_to(REPO_ROOT)} does not exist"
    names = top_level_names(path.read_text(encoding="utf-8"), str(path))
    assert func in names, f"{function_id}: {path.relative_to(REPO_ROOT)} does not define {func!r}"


@pytest.mark.parametrize("function_id", FUNCTION_IDS)
def test_function_uses_ragline_layer(function_id: str) -> None:
    assert {"Ref": LAYER_ID} in function_layers(function_id), f"{function_id} does not use {LAYER_ID}"


def test_ingestion_queue_is_safe_for_its_function() -> None:
    """Visibility >= 6x the function timeout, a DLQ after bounded receives, partial batch failures."""
    resources = load_template()["Resources"]
    fn = resources["IngestionFunction"]["Properties"]
    queue = resources["IngestQueue"]["Properties"]
    assert queue["VisibilityTimeout"] >= 6 * fn["Timeout"]
    assert 1 < queue["RedrivePolicy"]["maxReceiveCount"] <= 5
    event = fn["Events"]["Documents"]["Properties"]
    assert event["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert event["ScalingConfig"]["MaximumConcurrency"] >= 2
    bucket = resources["DocumentsBucket"]["Properties"]
    notifications = bucket["NotificationConfiguration"]["QueueConfigurations"]
    assert {n["Event"] for n in notifications} == {"s3:ObjectCreated:*", "s3:ObjectRemoved:*"}


def test_only_the_documents_bucket_may_send_to_the_ingest_queue() -> None:
    """The queue policy names the bucket by ARN (aws:SourceArn), not only the account."""
    resources = load_template()["Resources"]
    name, variables = resources["DocumentsBucket"]["Properties"]["BucketName"]["Fn::Sub"]
    (statement,) = resources["IngestQueuePolicy"]["Properties"]["PolicyDocument"]["Statement"]
    source_arn, source_variables = statement["Condition"]["ArnEquals"]["aws:SourceArn"]["Fn::Sub"]
    assert source_arn == f"arn:${{AWS::Partition}}:s3:::{name}" and source_variables == variables
    # The suffix is the stack id's first 8 hex digits (tests/deploy/test_redeploy.py resolves it).
    longest = {"${Stage}": "x" * 16, "${AWS::AccountId}": "0" * 12, "${AWS::Region}": "ap-southeast-5",
               "${StackSuffix}": "0" * 8}  # fmt: skip
    for variable, value in longest.items():
        name = name.replace(variable, value)
    assert len(name) <= 63


# -- what a working deployment needs (the deploy rehearsal proves them at run time) ----------------


def global_env() -> dict[str, Any]:
    return dict(GLOBAL_FUNCTION["Environment"]["Variables"])


def test_every_function_has_a_writable_home_and_signed_opensearch() -> None:
    env = global_env()
    assert env["RAGLINE_HOME"].startswith("/tmp/")
    assert env["RAGLINE_OPENSEARCH_AUTH"] == "sigv4" and env["RAGLINE_BACKEND"] == "aws"
    assert env["RAGLINE_EMBEDDING_PROVIDER"] == "bedrock"  # no offline model in the AWS layer
    for function_id in FUNCTION_IDS:
        own = (RESOURCES[function_id]["Properties"].get("Environment") or {}).get("Variables") or {}
        assert "RAGLINE_HOME" not in own or own["RAGLINE_HOME"].startswith("/tmp/"), function_id


def test_pydantic_skips_its_plugin_scan_on_every_cold_start() -> None:
    assert global_env()["PYDANTIC_DISABLE_PLUGINS"] == "__all__"


def test_the_chat_route_streams_and_run_sh_finds_the_layer() -> None:
    chat = RESOURCES["ChatFunction"]["Properties"]
    assert chat["Events"]["Chat"]["Properties"]["ResponseTransferMode"] == "RESPONSE_STREAM"
    api = RESOURCES["RaglineApi"]["Properties"]
    assert api["EndpointConfiguration"]["Type"] == "REGIONAL"
    run_sh = (REPO_ROOT / "functions" / "chat" / "run.sh").read_text()
    assert "/opt/python" in run_sh and "LAMBDA_TASK_ROOT" in run_sh
    adapter = [layer for layer in chat["Layers"] if "LambdaAdapterLayer" in str(layer)]
    assert adapter and "${AWS::Region}" in str(adapter[0]), "the Web Adapter layer must follow the region"


def statements(function_id: str) -> list[dict[str, Any]]:
    """Every statement the role may have, on either side of a condition (``ChatProvider``)."""
    out: list[dict[str, Any]] = []
    props = RESOURCES[function_id]["Properties"]
    if "Role" in props:  # a role of its own: its inline policies' statements
        role = RESOURCES[props["Role"]["Fn::GetAtt"][0]]["Properties"]
        policies = [p["PolicyDocument"] for p in role["Policies"]]
    else:
        policies = list(props["Policies"])
    while policies:
        policy = policies.pop()
        if isinstance(policy, dict) and "Fn::If" in policy:
            policies.extend(p for p in policy["Fn::If"][1:] if isinstance(p, dict))
        elif isinstance(policy, dict) and "Sid" in policy:  # a statement (under a condition)
            out.append(policy)
        elif isinstance(policy, dict):
            policies.extend(policy.get("Statement", []))
    return out


def actions(function_id: str) -> set[str]:
    found: set[str] = set()
    for statement in statements(function_id):
        acts = statement["Action"]
        found.update([acts] if isinstance(acts, str) else acts)
    return found


@pytest.mark.parametrize("function_id", ["SearchFunction", "HostingSearchFunction", "ChatFunction"])
def test_metered_functions_can_charge_and_read_models(function_id: str) -> None:
    assert {"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"} <= actions(function_id)
    assert {"es:ESHttpGet", "es:ESHttpPost", "bedrock:InvokeModel", "bedrock:Rerank"} <= actions(function_id)
    # the chat model: Bedrock (Converse and ConverseStream) or an OpenAI-compatible endpoint's key
    assert {"bedrock:InvokeModelWithResponseStream", "secretsmanager:GetSecretValue"} <= actions(function_id)
    assert "es:ESHttpDelete" not in actions(function_id)  # readers never delete


@pytest.mark.parametrize("function_id", ["IngestionFunction", "DocumentsFunction"])
def test_writers_can_index_and_claim_the_embedding_space(function_id: str) -> None:
    assert {"es:ESHttpPut", "es:ESHttpDelete", "bedrock:InvokeModel", "dynamodb:PutItem"} <= actions(
        function_id
    )


@pytest.mark.parametrize("function_id", FUNCTION_IDS)
def test_every_function_has_a_log_group_with_retention(function_id: str) -> None:
    """Created by the stack (so deleted with it and kept 30 days), not by Lambda on first log line."""
    groups = [
        res["Properties"]
        for res in RESOURCES.values()
        if res["Type"] == "AWS::Logs::LogGroup"
        and res["Properties"]["LogGroupName"] == {"Fn::Sub": f"/aws/lambda/${{{function_id}}}"}
    ]
    assert len(groups) == 1 and groups[0]["RetentionInDays"] == 30, function_id


def api_events() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (fid, name, event["Properties"])
        for fid in FUNCTION_IDS
        for name, event in (RESOURCES[fid]["Properties"].get("Events") or {}).items()
        if event["Type"] == "Api"
    ]


def test_every_route_is_on_the_api_behind_the_key_authorizer() -> None:
    api = RESOURCES["RaglineApi"]["Properties"]
    assert api["Auth"]["DefaultAuthorizer"] == "ApiKeyAuthorizer"
    routes = set()
    for fid, name, props in api_events():
        assert props["RestApiId"] == {"Ref": "RaglineApi"}, (fid, name)
        assert "Auth" not in props, f"{fid}.{name} overrides the API-key authorizer"
        routes.add((props["Method"], props["Path"], fid))
    assert ("post", "/v1/hosting-search", "HostingSearchFunction") in routes
    assert ("post", "/v1/namespaces/{namespace}/search", "SearchFunction") in routes


def test_hosting_search_mirrors_search_with_chats_timeout() -> None:
    """Same role and data access as search; several model calls per request, so chat's timeout."""
    hosting, search = (RESOURCES[f]["Properties"] for f in ("HostingSearchFunction", "SearchFunction"))
    # the same policies, but search asks the chat model only to rerank with it (Reranker=llm)
    asks = {"SearchAsksBedrockChat": "UseBedrockChat", "SearchAsksOpenAiChat": "UseOpenAiChat"}
    for policy, theirs in zip(search["Policies"], hosting["Policies"], strict=True):
        mine = policy
        if isinstance(policy, dict) and policy.get("Fn::If", [None])[0] in asks:
            mine = {"Fn::If": [asks[policy["Fn::If"][0]], *policy["Fn::If"][1:]]}
        assert mine == theirs
    assert hosting["Layers"] == search["Layers"]
    assert function_property("HostingSearchFunction", "MemorySize") == function_property(
        "SearchFunction", "MemorySize"
    )
    assert hosting["Timeout"] == max(
        function_property("ChatFunction", "Timeout"), function_property("SearchFunction", "Timeout")
    )


def test_opensearch_domain_is_private_encrypted_and_for_the_function_roles() -> None:
    domain = RESOURCES["OpenSearchDomain"]["Properties"]
    assert domain["EngineVersion"] == "OpenSearch_2.19"
    assert domain["DomainEndpointOptions"]["EnforceHTTPS"] is True
    assert "TLS-1-2" in domain["DomainEndpointOptions"]["TLSSecurityPolicy"]
    assert domain["EncryptionAtRestOptions"]["Enabled"] and domain["NodeToNodeEncryptionOptions"]["Enabled"]
    principals = [p for st in domain["AccessPolicies"]["Statement"] for p in st["Principal"]["AWS"]]
    assert {p["Fn::GetAtt"][0] for p in principals} == {
        "SearchFunctionRole",
        "HostingSearchFunctionRole",
        "ChatFunctionRole",
        "DocumentsFunctionRole",
        "IngestionFunctionRole",
    }


def test_alarms_and_outputs_for_operators() -> None:
    alarms = {rid for rid, res in RESOURCES.items() if res["Type"] == "AWS::CloudWatch::Alarm"}
    assert {
        "IngestDeadLetterAlarm",
        "Api5xxAlarm",
        "ChatThrottleAlarm",
        "SearchThrottleAlarm",
        "HostingSearchThrottleAlarm",
        "IngestionErrorAlarm",
    } <= alarms
    outputs = set(TEMPLATE["Outputs"])
    assert {
        "ApiUrl",
        "OpenSearchEndpointUrl",
        "TenantsTableName",
        "UsageTableName",
        "LlmApiKeySecretId",
    } <= outputs
