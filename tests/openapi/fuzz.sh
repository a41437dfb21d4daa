#!/usr/bin/env bash
# Fuzzes the HTTP API from its own OpenAPI document with schemathesis: a real `boardsmith serve`
# ($BOARDSMITH_BIN) on loopback with a temporary data directory and token, offline data, and the
# scripted mock model (`mock-llm --demo`) as its only provider, so nothing leaves the machine.
# Fails on any 5xx, and on any response the document does not describe (status, content type,
# headers, body schema). Usage: SCHEMATHESIS=path/to/schemathesis tests/openapi/fuzz.sh
# FUZZ_SEED (default 1: the same cases every run, so a failure reproduces; another seed explores),
# FUZZ_EXAMPLES (per operation, default 5), FUZZ_SECONDS (the run's budget, default 90).
set -euo pipefail
bin="${BOARDSMITH_BIN:?set BOARDSMITH_BIN to the boardsmith binary}"
st="${SCHEMATHESIS:-schemathesis}"
dir=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

# Waits until `file` has a line matching `pattern` and prints its URL.
url_in() {
  local file=$1 pattern=$2
  for _ in $(seq 300); do
    if grep -qE "$pattern" "$file" 2>/dev/null; then
      grep -oE "$pattern" "$file" | head -1 | grep -oE 'http://[0-9.:]+'
      return
    fi
    sleep 0.1
  done
  echo "no '$pattern' in 30 s:" >&2
  cat "$file" >&2
  return 1
}

mkdir -p "$dir/work"
(cd "$dir/work" && exec "$bin" mock-llm --demo --port 0 >"$dir/mock.log" 2>&1) &
pids+=($!)
mock=$(url_in "$dir/mock.log" 'listening on http://[0-9.:]+')

token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
# Starts a server over data directory $1 (logging to $1.log) and prints its URL.
start_server() {
  local data=$1
  (
    cd "$dir/work"
    export BOARDSMITH_ADDR=127.0.0.1:0 BOARDSMITH_TOKEN="$token" BOARDSMITH_DATA="$data" \
      BOARDSMITH_WORKERS=2 BOARDSMITH_OFFLINE=1 RUST_LOG=warn \
      AGENT_EXTERNAL_DIR="$data-agents" AGENT_TOOLS_EXTERNAL_DIR="$dir/tools" \
      AGENT_VIEWPORT_EXTERNAL_DIR="$dir/viewports" \
      OPENAI_API_KEY=mock OPENAI_BASE_URL="$mock/v1"
    exec "$bin" serve >"$data.log" 2>&1
  ) &
  pids+=($!)
  url_in "$data.log" 'boardsmith listening on http://[0-9.:]+'
}

# One schemathesis run against server $1 with the extra arguments that follow; bounded: a few
# examples per operation and a time budget.
fuzz() {
  local server=$1
  shift
  (cd "$dir/work" && "$st" run "$server/openapi.json" \
    --header "Authorization: Bearer $token" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance \
    --phases examples,coverage,fuzzing \
    --max-examples "${FUZZ_EXAMPLES:-5}" \
    --request-timeout 20 \
    --seed "${FUZZ_SEED:-1}" \
    --generation-database none \
    `# Hypothesis discards many generated ids of GET /v1/models/{id} (strings that cannot be one` \
    `# path segment) and calls that a failed health check: a limit of the generator, not a finding.` \
    --suppress-health-check filter_too_much \
    --no-color "$@")
}

status=0
# 1. Everything but the admin writes, on a server whose only provider is the mock.
server=$(start_server "$dir/data")
fuzz "$server" --max-time "${FUZZ_SECONDS:-90}" \
  --exclude-name-regex '^(POST|PUT|PATCH|DELETE) /api/admin/' || status=$?
# 2. The admin routes alone, on a fresh server: generated providers may name any host, so no
#    route that calls a model runs in this pass (defining a provider calls nothing).
admin=$(start_server "$dir/admin")
fuzz "$admin" --max-time "${FUZZ_ADMIN_SECONDS:-40}" --include-path-regex '^/api/admin/' || status=$?

for log in "$dir/data.log" "$dir/admin.log"; do
  if grep -q "panicked" "$log"; then
    echo "the server panicked during the run ($log):" >&2
    grep -A12 "panicked" "$log" >&2
    status=1
  fi
done
exit $status
