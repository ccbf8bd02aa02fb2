#!/bin/bash
# Lambda Web Adapter entry point: the adapter forwards invocations to this server on $PORT.
exec python -m uvicorn --host 127.0.0.1 --port "${PORT:-8080}" --no-access-log app:app
