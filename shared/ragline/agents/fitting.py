"""A chat model that fits the conversation to its context window: when a turn is refused as too long
(:class:`~ragline.errors.ContextTooLong`) before the model said anything, the history is shortened
(:func:`~ragline.domain.pruning.shrink_for_context`) and the turn asked once more; a second refusal —
or nothing left to shorten — is the caller's clear ``context_too_long`` error."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from ragline import errors
from ragline.domain.chat import ChatMessage, ChatOptions, ModelEvent, ToolSpec
from ragline.domain.pruning import shrink_for_context
from ragline.ports import ChatModel


class ContextFitting:
    def __init__(self, inner: ChatModel) -> None:
        self.inner = inner
        self.name = inner.name

    def stream(
        self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec], options: ChatOptions
    ) -> Iterator[ModelEvent]:
        said = False
        try:
            for event in self.inner.stream(messages, tools, options):
                said = True
                yield event
            return
        except errors.ContextTooLong as exc:
            shorter = shrink_for_context(messages)
            if said or shorter == list(messages):
                raise errors.ContextTooLong(
                    f"the conversation does not fit the context window of model {self.name}; shorten it",
                    **exc.details,
                ) from exc
            refused = exc
        try:
            yield from self.inner.stream(shorter, tools, options)
        except errors.ContextTooLong as exc:
            raise errors.ContextTooLong(
                f"the conversation does not fit the context window of model {self.name}, even with"
                " earlier turns and tool results shortened; shorten it",
                **exc.details,
            ) from refused
