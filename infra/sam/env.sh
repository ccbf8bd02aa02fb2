# Sourced by infra/sam/validate and infra/sam/build: sam in its own venv (infra/sam/.venv, made or
# refreshed when requirements.txt changes), run with a private HOME (no version check, no telemetry,
# no user config) and a dummy region, never touching AWS.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$here/../.." && pwd)"
venv="$here/.venv"
requirements="$here/requirements.txt"
stamp="$venv/.requirements-installed"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/sam" || ! -f "$stamp" || "$requirements" -nt "$stamp" ]]; then
    echo "infra/sam: installing $(basename "$requirements") into infra/sam/.venv ..." >&2
    "$python" -m venv --clear "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    touch "$stamp"
fi

# Private HOME for sam (see above): no version check, no telemetry, no user config.
sam_home="$venv/sam-home"
mkdir -p "$sam_home/.aws-sam"
cat >"$sam_home/.aws-sam/metadata.json" <<'JSON'
{"telemetryEnabled": false, "lastVersionCheck": 4102444800.0}
JSON

export SAM_CLI_TELEMETRY=0
export AWS_DEFAULT_REGION=us-east-1
export AWS_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true

