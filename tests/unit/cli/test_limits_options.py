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


def test_tenants_limits_without_options_shows_the_limits_and_reset_clears_them(tmp_path: Path) -> None:
    home = ["--home", str(tmp_path)]
    assert (
        runner.invoke(app, ["tenants", "create", "acme", "--rps", "5", "--max-runs", "2", *home]).exit_code
        == 0
    )
    # When the operator asks with no option, then the limits are shown and kept
    shown = runner.invoke(app, ["tenants", "limits", "acme", *home])
    assert shown.exit_code == 0, shown.output
    assert "requestsPerSecond=5.0, maxConcurrentRuns=2" in shown.output
    again = runner.invoke(app, ["tenants", "limits", "acme", *home])
    assert "requestsPerSecond=5.0, maxConcurrentRuns=2" in again.output
    # and --reset (alone) puts them back to the deployment's defaults
    assert runner.invoke(app, ["tenants", "limits", "acme", "--reset", "--rps", "1", *home]).exit_code == 2
    reset = runner.invoke(app, ["tenants", "limits", "acme", "--reset", *home])
    assert reset.exit_code == 0 and "the deployment's defaults" in reset.output
    assert "the deployment's defaults" in runner.invoke(app, ["tenants", "limits", "acme", *home]).output
