"""API keys, usage, the identity provider and the webhooks of the caller's tenant (scope ``admin``,
checked by the services).

A new key's plaintext is in the creation response only; nothing else ever returns a key or its hash.
A webhook's signing secret likewise: only its creation and its rotation return it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.openapi.params import Query

from ragline import snapstart, telemetry
from ragline.domain import api, webhook_api
from ragline.http import caller, resolve, rest_app, services

if TYPE_CHECKING:  # annotations only
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from ragline.wiring import Container

PERIOD = r"^[0-9]{4}-(0[1-9]|1[0-2])$"
"""``YYYY-MM`` in ASCII digits (``\\d`` takes any script's); pydantic's regex ``$`` ends the text only."""
logger = telemetry.handler_logger()
tracer = telemetry.handler_tracer()
app = rest_app(logger)


@app.get("/v1/keys")
def list_keys() -> api.KeyList:
    return services(app).tenancy.keys(caller(app))


@app.post("/v1/keys", status_code=201)
def create_key(body: api.NewKey) -> Response[api.NewKeyView]:
    return Response(201, "application/json", services(app).tenancy.issue_key(caller(app), body))


@app.delete("/v1/keys/<key_id>")
def revoke_key(key_id: str) -> api.KeyView:
    return services(app).tenancy.revoke(caller(app), key_id)


@app.get("/v1/tenant/identity-provider")
def get_identity_provider() -> api.IdentityProviderView:
    return services(app).identity_providers.show(caller(app))


@app.put("/v1/tenant/identity-provider")
def put_identity_provider(body: api.IdentityProviderBody) -> api.IdentityProviderView:
    return services(app).identity_providers.put(caller(app), body)


@app.delete("/v1/tenant/identity-provider")
def delete_identity_provider() -> api.IdentityProviderDeleted:
    return services(app).identity_providers.delete(caller(app))


@app.get("/v1/webhooks")
def list_webhooks() -> webhook_api.WebhookList:
    return services(app).webhooks.list(caller(app))


@app.post("/v1/webhooks", status_code=201)
def create_webhook(body: webhook_api.NewWebhook) -> Response[webhook_api.NewWebhookView]:
    return Response(201, "application/json", services(app).webhooks.create(caller(app), body))


@app.get("/v1/webhooks/<webhook_id>")
def get_webhook(webhook_id: str) -> webhook_api.WebhookView:
    return services(app).webhooks.get(caller(app), webhook_id)


@app.delete("/v1/webhooks/<webhook_id>")
def delete_webhook(webhook_id: str) -> webhook_api.WebhookView:
    return services(app).webhooks.delete(caller(app), webhook_id)


@app.post("/v1/webhooks/<webhook_id>/rotate-secret")
def rotate_webhook_secret(webhook_id: str) -> webhook_api.NewWebhookView:
    return services(app).webhooks.rotate(caller(app), webhook_id)


@app.get("/v1/usage")
def usage(period: Annotated[str | None, Query(pattern=PERIOD)] = None) -> api.UsageReport:
    return services(app).metering.usage_report(caller(app), period)


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, *, container: Container | None = None
) -> Any:
    return resolve(app, event, context, container)


# a SnapStart init's warm-up and hooks; nothing otherwise
snapstart.prepare("tenancy", "metering", "identity_providers", "webhooks")
