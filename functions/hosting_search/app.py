"""POST /v1/hosting-search — the best chunks for a conversation: a self-evaluating multi-query search.

The tenant comes only from the authorizer context; nothing in the body can name another.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ragline import snapstart, telemetry
from ragline.domain.api import HostingSearchRequest, HostingSearchResponse
from ragline.http import caller, resolve, rest_app, run_id, services

if TYPE_CHECKING:  # annotations only
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from ragline.wiring import Container

logger = telemetry.handler_logger()
tracer = telemetry.handler_tracer()
app = rest_app(logger)


@app.post("/v1/hosting-search")
def hosting_search(body: HostingSearchRequest) -> HostingSearchResponse:
    started, run = time.perf_counter(), run_id(app)
    telemetry.correlate(run, logger, tracer)
    principal = caller(app)
    with services(app).tenant_gate.run_slot(principal):  # too many runs in flight: 429, before any work
        response = services(app).hosting_search.search(principal, body, run_id=run)
    telemetry.record_run(
        "hosting_search", response.usage, response.exit_reason, started, len(response.rounds)
    )
    return response


@logger.inject_lambda_context
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(
    event: dict[str, Any], context: LambdaContext, *, container: Container | None = None
) -> Any:
    return resolve(app, event, context, container)


snapstart.prepare("hosting_search")  # a SnapStart init's warm-up and hooks; nothing otherwise
