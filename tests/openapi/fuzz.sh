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
# Every process this script starts in the background is its direct child (`exec` replaces each
# subshell), recorded here by the main shell: `pids+=($!)` in a subshell, `$( … )` included, is
# lost with it. The servers' sandbox workers are their children and exit with them (their stdin
# closes).
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  # Up to 10 s for a graceful exit, then SIGKILL; `wait` reaps them either way.
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  rm -rf "$dir"
}
trap cleanup EXIT
# A signal ends the script through its EXIT trap, so the servers stop then too.
trap 'exit 130' INT
trap 'exit 143' TERM

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
# Starts a server over data directory $1, logging to $1.log. In the main shell, not in `$( … )`:
# its pid must reach `pids`. Read its URL with `url_in "$1.log" …` afterwards.
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
}
listening='boardsmith listening on http://[0-9.:]+'

# One schemathesis run against server $1 with the extra arguments that follow; bounded: a few
# examples per operation and a time budget. In the background with `wait`: a signal to this script
# runs its trap at once instead of after the run.
fuzz() {
  local server=$1
  shift
  (cd "$dir/work" && exec "$st" run "$server/openapi.json" \
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
    --no-color "$@") &
  pids+=($!)
  wait $!
}

status=0
# 1. Everything but the admin writes, on a server whose only provider is the mock.
start_server "$dir/data"
server=$(url_in "$dir/data.log" "$listening")
fuzz "$server" --max-time "${FUZZ_SECONDS:-90}" \
  --exclude-name-regex '^(POST|PUT|PATCH|DELETE) /api/admin/' || status=$?
# 2. The admin routes alone, on a fresh server: generated providers may name any host, so no
#    route that calls a model runs in this pass (defining a provider calls nothing).
start_server "$dir/admin"
admin=$(url_in "$dir/admin.log" "$listening")
fuzz "$admin" --max-time "${FUZZ_ADMIN_SECONDS:-40}" --include-path-regex '^/api/admin/' || status=$?

for log in "$dir/data.log" "$dir/admin.log"; do
  if grep -q "panicked" "$log"; then
    echo "the server panicked during the run ($log):" >&2
    grep -A12 "panicked" "$log" >&2
    status=1
  fi
done
exit $status
