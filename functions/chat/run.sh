#!/bin/bash
# Lambda Web Adapter entry point: the adapter forwards invocations to this server on $PORT.
# The adapter starts this script directly, not through the Python runtime's bootstrap, so the layer
# (/opt/python: uvicorn, starlette, ragline) and the task directory must be put on the path here.
export PYTHONPATH="/opt/python:${LAMBDA_TASK_ROOT:-$(dirname "$0")}${PYTHONPATH:+:$PYTHONPATH}"
# Unbuffered: log lines and metrics reach CloudWatch as they are written, not when a buffer fills.
export PYTHONUNBUFFERED=1
exec python -m uvicorn --host 127.0.0.1 --port "${PORT:-8080}" --no-access-log app:app
