"""The base of every response body, in a module of its own: :mod:`ragline.domain.api` uses bodies
defined elsewhere on it (a run's :class:`~ragline.domain.plans.QueryPlan`), which could not import it
from there without an import cycle. :mod:`ragline.domain.api` re-exports it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    """A response body (built in code by field name, serialised in camelCase).

    ``defer_build``: every handler imports this module but uses a few of its models; each model's
    validator and serializer are built when it is first used, not on every cold start.
    """

    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, serialize_by_alias=True, defer_build=True
    )
