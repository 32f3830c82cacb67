# Shared by bench/grpc_http_rows.sh and bench/grpc_hop.sh (sourced, not run): a temporary
# directory with the rows' config (a zero-cost emulated model: executor.time_scale=0,
# engine.admission=off, 2 workers, fixed resnet18, input -1,16), the processes started
# (`pids`, killed on exit), and helpers. `$script` names the caller in errors.
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/rows.yaml" <<'YAML'
suite: ramsis-image
task: image
hardware: n1-4cpu
workers: 2
slo_ms: 1000
seed: 1
executor: {latency: sample, time_scale: 0}
engine: {admission: off}
policy: {name: fixed, dispatch: round_robin, batching: edf, selection: fixed, variant: resnet18}
server: {input_shape: "-1,16"}
YAML

# Waits for "listening on SCHEME://127.0.0.1:PORT" in log $1 and prints PORT.
port_of() {
  for _ in $(seq 100); do
    if p=$(grep -o "$2://127.0.0.1:[0-9]*" "$1" | head -1 | sed 's/.*://') && [ -n "$p" ]; then
      echo "$p"
      return
    fi
    sleep 0.1
  done
  echo "$script: no $2 port in $1:" >&2
  cat "$1" >&2
  exit 1
}
wait_ready() {
  for _ in $(seq 300); do grep -q "sloserve: ready" "$1" && return; sleep 0.1; done
  echo "$script: not ready: $(cat "$1")" >&2
  exit 1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
