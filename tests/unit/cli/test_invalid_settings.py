"""A setting the environment gives a value it does not take ends any command with one line naming
the variable and what it accepts (``configuration_error``, exit 2), never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragline.cli.app import app

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("variable", "value", "command"),
    [
        ("RAGLINE_GROUNDING", "bogus", ["chat", "How tall is it?"]),
        ("RAGLINE_GROUNDING", "VERIFIER", ["namespaces", "list"]),
        ("RAGLINE_GROUNDING_MAX_SENTENCES", "0", ["tenants", "create", "acme"]),
    ],
)
def test_an_invalid_setting_is_a_configuration_error_naming_its_variable(
    tmp_path: Path, variable: str, value: str, command: list[str]
) -> None:
    result = CliRunner().invoke(app, [*command, "--home", str(tmp_path)], env={variable: value})
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # not the settings model's ValidationError
    assert "error [configuration_error]: invalid settings:" in result.output
    assert variable in result.output
