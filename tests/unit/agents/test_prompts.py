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
    run_system_prompt,
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


def test_a_run_over_namespaces_that_share_a_prompt_or_set_none_uses_it_once() -> None:
    shop = "You are Northwind's support bot."
    assert run_system_prompt([("docs", shop), ("faq", shop), ("hr", "")]) == resolve_system_prompt(shop)
    defaults = [("docs", ""), ("hr", sorted(KNOWN_DEFAULT_PROMPTS)[0])]
    assert run_system_prompt(defaults, tools=False) == resolve_system_prompt("", tools=False)


def test_a_run_over_namespaces_with_different_prompts_keeps_each_naming_its_namespaces() -> None:
    resolved = run_system_prompt(
        [("docs", "Answer as the shop."), ("hr", "Answer as HR."), ("faq", "Answer as the shop.")]
    )
    assert resolved.startswith("Instructions set for namespaces docs, faq:\nAnswer as the shop.")
    assert "\n\nInstructions set for namespace hr:\nAnswer as HR.\n" in resolved
    assert resolved.endswith(PLATFORM_CONTRACT) and resolved.count(TOOL_RULES) == 1
