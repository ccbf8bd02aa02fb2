"""The limit options of the operator's CLI refuse what the limits cannot hold with a usage error
(exit 2, the option named), never a traceback, and create nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragline.cli.app import app

pytestmark = pytest.mark.unit
runner = CliRunner()


@pytest.mark.parametrize(
    ("option", "value"), [("--rps", "200000"), ("--burst", "2000000"), ("--max-runs", "20000")]
)
def test_a_limit_out_of_range_is_a_usage_error_naming_the_option(
    tmp_path: Path, option: str, value: str
) -> None:
    result = runner.invoke(app, ["tenants", "create", "acme", option, value, "--home", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert option in result.output
    listed = runner.invoke(app, ["tenants", "limits", "acme", option, value, "--home", str(tmp_path)])
    assert listed.exit_code == 2 and option in listed.output
