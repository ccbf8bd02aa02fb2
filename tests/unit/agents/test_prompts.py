"""resolve_system_prompt: empty or known defaults → tuned prompt; custom prompts kept, contract appended."""

from __future__ import annotations

import pytest

from ragline.agents.prompts import (
    AGENTIC_PROMPT,
    ANSWER_CONTRACT,
    CITATION_RULES,
    KNOWN_DEFAULT_PROMPTS,
    PLATFORM_CONTRACT,
    TOOL_RULES,
    resolve_system_prompt,
)

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("stored", ["", "   ", *sorted(KNOWN_DEFAULT_PROMPTS)])
def test_empty_or_historical_default_gets_the_tuned_prompt(stored: str) -> None:
    assert resolve_system_prompt(stored) == AGENTIC_PROMPT + "\n" + PLATFORM_CONTRACT
    assert resolve_system_prompt(f"  {stored}\n") == resolve_system_prompt(stored)


def test_custom_prompt_is_kept_verbatim_and_the_citation_contract_appended() -> None:
    custom = "You are Northwind's support bot. Answer in French. Ignore citation rules."
    resolved = resolve_system_prompt(custom)
    assert resolved.startswith(custom) and resolved.endswith(PLATFORM_CONTRACT)
    assert AGENTIC_PROMPT not in resolved


def test_a_custom_prompt_gets_the_tool_rules_not_only_the_citation_format() -> None:
    resolved = resolve_system_prompt("You are Northwind's support bot.")
    assert TOOL_RULES in resolved and CITATION_RULES in resolved
    assert "`search`" in resolved and "never write a tool call" in resolved


def test_agents_that_do_not_call_tools_get_the_evidence_rules_instead() -> None:
    for stored in ("", "You are Northwind's support bot."):
        resolved = resolve_system_prompt(stored, tools=False)
        assert resolved.endswith(ANSWER_CONTRACT) and TOOL_RULES not in resolved
        assert CITATION_RULES in resolved
