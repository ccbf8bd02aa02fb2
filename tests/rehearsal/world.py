"""The deploy rehearsal's world: the built artifacts, the stand-ins for the stack's AWS resources
(moto, the local Bedrock server, the OpenSearch node behind a SigV4-checking proxy, the S3 gate, an
X-Ray daemon), the functions running against them as the translated template configures them, and the
calls a scenario makes through the template's own routes and event sources."""

from __future__ import annotations

import copy
import json
import platform
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3

from tests.rehearsal.aoss import COLLECTION_ARN, COLLECTION_ID, collection_calls
from tests.rehearsal.cloudformation import ACCOUNT, PARTITION, REGION, AwsCall, Stack
from tests.rehearsal.host import (
    SANDBOX_LOGS,
    TOOLS,
    LambdaFunction,
    TracingTap,
    free_port,
)
from tests.rehearsal.iam import calls_from_log, opensearch_call
from tests.rehearsal.s3_gate import S3Gate
from tests.rehearsal.signed_proxy import SignedProxy
from tests.rehearsal.stack_checks import api_routes, event_sources
from tests.rehearsal.xray import XRayDaemon
from tests.support.bedrock_server import BedrockServer
from tests.support.cfn_tables import create_table_from_template
from tests.support.model_endpoints import converse_turn
from tests.support.openai_replay import OpenAIReplay, Turn
from tests.support.textract_server import TextractServer

ARCH = {"x86_64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}[platform.machine()]
DOMAIN_ARN = f"arn:aws:es:{REGION}:{ACCOUNT}:domain/rehearsal"
FUNCTIONS = (
    "AuthorizerFunction",
    "NamespacesFunction",
    "KeysFunction",
    "SearchFunction",
    "HostingSearchFunction",
    "DocumentsFunction",
    "IngestionFunction",
    "ChatFunction",
    "WebhookDeliveryFunction",
)
TRACED = tuple(fn for fn in FUNCTIONS if fn != "AuthorizerFunction")
"""The functions with Powertools Tracer; the authorizer has the platform's segments alone (cold start)."""
BEDROCK_CHAT_MODEL = "us.amazon.nova-pro-v1:0"


@dataclass
class Artifacts:
    build: Path
    translated: dict[str, Any]
    runtime: Path
    logs: Path


class ChatScript:
    """The chat model's scripted turns, written once in the replay's terms and played by the model the
    stack is deployed with: the Bedrock server (Converse, the template's default) or the replay server."""

    def __init__(self, provider: str, bedrock: BedrockServer, llm: OpenAIReplay) -> None:
        self.provider, self.bedrock, self.llm = provider, bedrock, llm

    def script(self, turns: list[Turn]) -> None:
        if self.provider == "bedrock":
            self.bedrock.script_converse([c for t in turns for c in converse_turn(t)])
        else:
            self.llm.script(turns)

    @property
    def remaining(self) -> list[Any]:
        return self.bedrock.converse_remaining if self.provider == "bedrock" else self.llm.remaining

    def last_conversation(self) -> list[tuple[str, str]]:
        """The user and assistant messages the model was last shown, as (role, text)."""
        if self.provider == "bedrock":
            messages = self.bedrock.converse_requests[-1]["messages"]
            return [(m["role"], "".join(b.get("text", "") for b in m["content"])) for m in messages]
        messages = self.llm.chat_requests[-1]["messages"]
        return [(m["role"], m.get("content") or "") for m in messages if m["role"] in ("user", "assistant")]


class World:
    """The stand-ins for the stack's AWS resources, and the functions running against them."""

    def __init__(
        self,
        art: Artifacts,
        moto: str,
        proxy_url: str,
        bedrock: BedrockServer,
        llm: OpenAIReplay,
        provider: str,
        mode: str = "domain",
        textract: TextractServer | None = None,
    ) -> None:
        """``textract``: the stack reads scans with Textract (``DocumentOcr=textract``) through this
        stand-in; without one, the template's default (``off``)."""
        self.art, self.moto, self.proxy_url, self.provider = art, moto, proxy_url, provider
        self.textract = textract
        self.mode = mode
        """The template's ``OpenSearchMode``: ``domain`` (an existing one: the proxy) or ``serverless``."""
        for log in art.logs.iterdir():  # another world's calls and logs are not this stack's
            log.unlink()
        self.model = ChatScript(provider, bedrock, llm)
        session = boto3.session.Session(region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
        self.s3, self.sqs = session.client("s3", endpoint_url=moto), session.client("sqs", endpoint_url=moto)
        ddb = session.client("dynamodb", endpoint_url=moto)
        secrets = session.client("secretsmanager", endpoint_url=moto)
        self.suffix = suffix = uuid.uuid4().hex[:8]
        tables = {t: f"rh-{t.lower()}-{suffix}" for t in ("TenantsTable", "UsageTable", "DocumentsTable")}
        for logical, name in tables.items():
            create_table_from_template(ddb, logical, name)
        queue_arn = self.documents_bucket(suffix)
        bus_arn, delivery_arn = self.event_bus(session, art.translated, moto, suffix)
        runs_arn = self.runs_queue(suffix)
        self.evaluations_bucket = self.new_bucket(f"rh-evaluations-{suffix}")  # evaluation jobs and reports
        self.secret_arn = secrets.create_secret(Name=f"ragline/rh-{suffix}", SecretString="sk-rehearsal")[
            "ARN"
        ]
        layer = next(k for k in art.translated["Resources"] if k.startswith("RaglineLayer"))
        refs = {
            **tables,
            "SyncScheduleGroup": self.sync_schedules(session, moto, suffix),
            "DocumentsBucket": self.bucket,
            "LlmApiKeySecret": self.secret_arn,
            "IngestQueue": self.queue_url,  # a reindex's steps are messages of the ingestion queue
            "EventBus": self.bus,
            "WebhookDeliveryQueue": self.delivery_url,
            "WebhookDeliveryDeadLetterQueue": self.delivery_dlq_url,
            "RunsQueue": self.runs_url,  # background chat runs, drained by the chat function
            "EvaluationsBucket": self.evaluations_bucket,
            layer: layer,
        }
        attrs = {f"{t}.Arn": f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{n}" for t, n in tables.items()}
        attrs |= {
            "IngestQueue.Arn": queue_arn,
            "EventBus.Arn": bus_arn,
            "WebhookDeliveryQueue.Arn": delivery_arn,
            "RunsQueue.Arn": runs_arn,
        }
        self.roles = {
            fn: art.translated["Resources"][fn]["Properties"]["Role"]["Fn::GetAtt"][0] for fn in FUNCTIONS
        }
        attrs |= {  # the functions' roles, and the one EventBridge Scheduler sends sync steps as
            f"{r}.Arn": f"arn:{PARTITION}:iam::{ACCOUNT}:role/rh-{r}-{suffix}"
            for r in [*self.roles.values(), "SyncSchedulerRole"]
        }
        params = {
            "AWS::StackName": f"rh-{suffix}",  # names the stack's secrets prefix (data sources)
            "LlmBaseUrl": llm.base_url,
            "ChatProvider": provider,
            # a cross-Region profile: the roles must allow it and the models it routes to
            "BedrockChatModel": BEDROCK_CHAT_MODEL,
        }
        if textract is not None:
            params["DocumentOcr"] = "textract"
        if mode == "serverless":  # the collection the template creates, its endpoint the proxy
            params["OpenSearchMode"] = "serverless"
            refs["OpenSearchCollection"] = COLLECTION_ID
            attrs["OpenSearchCollection.Arn"] = COLLECTION_ARN
            attrs["OpenSearchCollection.CollectionEndpoint"] = proxy_url
        else:
            params |= {"OpenSearchEndpoint": proxy_url, "ExistingOpenSearchDomainArn": DOMAIN_ARN}
        self.stack = Stack(art.translated, params, refs, attrs)
        self.layer_logical = layer
        self.tables, self.bedrock, self.llm = tables, bedrock, llm
        self.running: dict[str, LambdaFunction] = {}
        self.routes = api_routes(art.translated)
        self.sources = event_sources(art.translated)
        self.called: set[tuple[str, str]] = set()
        """The API routes (METHOD, resource) invoked through the stack."""
        self.delivered: set[str] = set()
        """The event sources whose events the stack's functions were given."""
        self.keys = {fn: f"AKIARH{i:02d}{suffix.upper()}" for i, fn in enumerate(FUNCTIONS)}
        self.taps: dict[str, TracingTap] = {}
        self.xray = XRayDaemon()
        self.s3_gate = S3Gate(moto, self.may_list)  # S3's 403 for a missing key, which moto never gives
        self.s3_url = self.s3_gate.start()

    def new_bucket(self, name: str) -> str:
        self.s3.create_bucket(Bucket=name)
        return name

    def runs_queue(self, suffix: str) -> str:
        """The queue of background chat runs (``RunsQueue``), drained by the chat function; its ARN."""
        self.runs_url = self.sqs.create_queue(QueueName=f"rh-runs-{suffix}")["QueueUrl"]
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.runs_url, AttributeNames=["QueueArn"])
        return str(attributes["Attributes"]["QueueArn"])

    def documents_bucket(self, suffix: str) -> str:
        """The documents bucket, notifying the ingestion queue as the template's; the queue's ARN. Not
        versioned, though the template's is: moto's versioned bucket sends no event for a delete marker
        (S3 sends ``ObjectRemoved:DeleteMarkerCreated``) and none of its events names a ``versionId``."""
        self.bucket = f"rh-docs-{suffix}"
        self.s3.create_bucket(Bucket=self.bucket)
        self.queue_url = self.sqs.create_queue(QueueName=f"rh-ingest-{suffix}")["QueueUrl"]
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=["QueueArn"])
        queue_arn = str(attributes["Attributes"]["QueueArn"])
        self.s3.put_bucket_notification_configuration(
            Bucket=self.bucket,
            NotificationConfiguration={
                "QueueConfigurations": [
                    {
                        "QueueArn": queue_arn,
                        "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"],  # as the template's
                    }
                ]
            },
        )
        return queue_arn

    def event_bus(self, session: Any, translated: dict[str, Any], moto: str, suffix: str) -> tuple[str, str]:
        """The bus, the delivery queue and its DLQ, and the template's rule (its own pattern) between
        them, on moto (which routes PutEvents through rules to SQS); the bus's and queue's ARNs."""
        self.events = session.client("events", endpoint_url=moto)
        self.bus = f"rh-events-{suffix}"
        bus_arn = str(self.events.create_event_bus(Name=self.bus)["EventBusArn"])
        self.delivery_dlq_url = self.sqs.create_queue(QueueName=f"rh-webhooks-dlq-{suffix}")["QueueUrl"]
        self.delivery_url = self.sqs.create_queue(QueueName=f"rh-webhooks-{suffix}")["QueueUrl"]
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.delivery_url, AttributeNames=["QueueArn"])
        delivery_arn = str(attributes["Attributes"]["QueueArn"])
        pattern = json.dumps(translated["Resources"]["WebhookEventsRule"]["Properties"]["EventPattern"])
        self.events.put_rule(Name=f"rh-webhooks-{suffix}", EventBusName=self.bus, EventPattern=pattern)
        target = {"Id": "WebhookDelivery", "Arn": delivery_arn}
        self.events.put_targets(Rule=f"rh-webhooks-{suffix}", EventBusName=self.bus, Targets=[target])
        return bus_arn, delivery_arn

    def sync_schedules(self, session: Any, moto: str, suffix: str) -> str:
        """The stack's schedule group (``SyncScheduleGroup``), made as CloudFormation would."""
        self.scheduler = session.client("scheduler", endpoint_url=moto)
        self.schedule_group = f"rh-syncs-{suffix}"
        self.scheduler.create_schedule_group(Name=self.schedule_group)
        return self.schedule_group

    def may_list(self, access_key: str, bucket: str) -> bool:
        fn = next((f for f, key in self.keys.items() if key == access_key), None)
        return fn is None or self.stack.function(fn).allows("s3:ListBucket", f"arn:aws:s3:::{bucket}")

    def layers(self, spec_layers: list[str]) -> list[Path]:
        out = []
        for ref in spec_layers:
            if ref == self.layer_logical:
                out.append(self.art.build / "RaglineLayer")
            elif re.search(r":layer:LambdaAdapterLayer(Arm64|X86)?:\d+$", ref) and f":{REGION}:" in ref:
                out.append(TOOLS / "lwa-layer")  # the crate built by build-tools, laid out as AWS's layer
            else:
                raise AssertionError(f"the rehearsal has no stand-in for layer {ref}")
        return out

    def start(self, fn: str) -> LambdaFunction:
        """The function's running instance (a warm one, as Lambda reuses it), started if need be."""
        if fn in self.running:
            return self.running[fn]
        spec = self.stack.function(fn)
        env = {**self.environment(fn), "REHEARSAL_CALL_LOG": f"{SANDBOX_LOGS}/{fn}.jsonl"}
        tap = self.taps[fn] = TracingTap(free_port())  # the runtime's way to the RIE's Runtime API
        if spec.handler == "run.sh":
            port = str(free_port())  # the template's 8080, but rehearsals may run side by side
            env.update(PORT=port, AWS_LWA_PORT=port)
            env["AWS_LWA_LAMBDA_RUNTIME_API_PROXY"] = f"127.0.0.1:{tap.port}"
        else:
            env["REHEARSAL_RUNTIME_API"] = f"127.0.0.1:{tap.port}"  # read by the recorder's sitecustomize
        task = self.art.build / fn
        self.running[fn] = LambdaFunction(
            fn,
            task=task,
            layers=self.layers(spec.layers),
            handler=spec.handler,
            env=env,
            runtime=self.art.runtime,
            log=self.art.logs / f"{fn}.log",
            tap=tap,
        )
        return self.running[fn]

    def environment(self, fn: str) -> dict[str, str]:
        """``fn``'s environment as Lambda gives it in this world: the template's variables as the stack
        resolves them, Lambda's own (Region, credentials: the function's key, X-Ray's daemon), and the
        endpoints of the stand-ins."""
        spec = self.stack.function(fn)
        return {
            **spec.environment,
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ACCESS_KEY_ID": self.keys[fn],
            "AWS_SECRET_ACCESS_KEY": "rehearsal",
            "AWS_ENDPOINT_URL": self.moto,
            "AWS_ENDPOINT_URL_S3": self.s3_url,
            "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": self.bedrock.url,
            "AWS_ENDPOINT_URL_BEDROCK_AGENT_RUNTIME": self.bedrock.url,
            **({"AWS_ENDPOINT_URL_TEXTRACT": self.textract.url} if self.textract else {}),
            "AWS_LAMBDA_FUNCTION_TIMEOUT": str(spec.timeout),
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(spec.memory),
            "AWS_XRAY_DAEMON_ADDRESS": self.xray.address,  # Lambda's own variable, for active tracing
            # Settings not from the template: this run's own indexes on the shared local node, so
            # another test's documents never rank in its searches (nor its in theirs); and data
            # sources may reach the stand-ins of the sites they sync, which listen on 127.0.0.1.
            "RAGLINE_OPENSEARCH_INDEX_PREFIX": f"rh-{self.suffix}",
            "RAGLINE_SOURCE_LOOPBACK_HTTP": "1",
        }

    def aws_calls(self, proxy: SignedProxy) -> list[AwsCall]:
        by_key = {key: fn for fn, key in self.keys.items()}
        out = [
            c
            for fn in self.running
            for c in calls_from_log(fn, self.art.logs / f"{fn}.jsonl", {self.secret_arn: self.secret_arn})
        ]
        # S3's 404 for a missing key is the caller's s3:ListBucket at work (403 without it)
        out += [
            AwsCall(by_key[key], "s3:ListBucket", f"arn:{PARTITION}:s3:::{bucket}")
            for key, bucket in self.s3_gate.revealed
            if key in by_key
        ]
        out += self.poller_calls()
        signed = [c for c in proxy.calls if c.key in by_key]
        if self.mode == "serverless":
            name = self.collection_name
            out += [
                a for c in signed for a in collection_calls(by_key[c.key], c.method, c.path, c.body, name)[0]
            ]
        else:
            out += [opensearch_call(by_key[c.key], c.method, c.path, DOMAIN_ARN) for c in signed]
        return out

    def with_template(self, template: dict[str, Any]) -> World:
        """This world as a stack of ``template`` would see it (the same stand-ins, the same run)."""
        other = copy.copy(self)
        other.stack = Stack(template, self.stack.parameters, self.stack.refs, self.stack.attributes)
        return other

    def poller_calls(self) -> list[AwsCall]:
        """What Lambda's event source mapping did with the function's role for each queue this run
        delivered from: the Lambda guide's minimum for an SQS event source, on that queue."""
        return [
            AwsCall(self.sources[source], action, self.stack.attributes[f"{source.split(':', 1)[1]}.Arn"])
            for source in sorted(self.delivered)
            if source.startswith("sqs:")
            for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes")
        ]

    @property
    def collection_name(self) -> str:
        return str(
            self.stack.resolve(self.art.translated["Resources"]["OpenSearchCollection"]["Properties"]["Name"])
        )

    def api(self, fn: str, event: dict[str, Any]) -> tuple[int, bytes]:
        """API Gateway's invocation of ``fn`` for the REST ``event``: the route must be the template's
        and reach ``fn`` there (the rehearsal cannot call a route through a function it is not wired to)."""
        route = (event["httpMethod"], event["resource"])
        assert route in self.routes, f"{route}: no such route in the translated template"
        assert self.routes[route].function == fn, f"{route} reaches {self.routes[route].function}, not {fn}"
        self.called.add(route)
        return self.start(fn).invoke(event)

    def deliver(self, source: str, event: dict[str, Any]) -> Any:
        """The event source mapping's invocation of its function (the template's) with ``event``."""
        assert source in self.sources, f"{source}: no such event source in the translated template"
        self.delivered.add(source)
        return self.start(self.sources[source]).invoke_json(event)

    def deliver_streamed(self, source: str, event: dict[str, Any]) -> tuple[int, bytes]:
        """:meth:`deliver` to a function behind the Web Adapter in response-stream mode: the invocation's
        status and its raw payload (the adapter's prelude, then the app's body)."""
        assert source in self.sources, f"{source}: no such event source in the translated template"
        self.delivered.add(source)
        return self.start(self.sources[source]).invoke(event)

    def stop(self) -> None:
        """Stops every function, tap and the daemon, also when one of them fails to stop."""
        failures = []
        for closable in [*(f.stop for f in self.running.values()), *(t.close for t in self.taps.values())]:
            try:
                closable()
            except Exception as exc:  # the others must still stop; the first failure is raised below
                failures.append(exc)
        self.xray.close()
        self.s3_gate.stop()
        if failures:
            raise failures[0]
