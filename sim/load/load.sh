#!/usr/bin/env bash
# Load test of searxgate against nginx on the same machine, on loopback only:
#   (a) cache hits: searxgate's cached answer vs nginx serving the same bytes
#       as a static file;
#   (b) cache misses on instant upstreams: searxgate vs nginx proxy_pass to
#       one sim instance, every request a new query.
# Needs wrk and nginx (Debian: apt-get install wrk nginx-light).
# Usage: sim/load/load.sh [seconds per run] [connections] [rounds]
# With several rounds the four runs are repeated, searxgate and nginx
# alternating, and the ratios of each round are printed with their median:
# on a shared machine the speed drifts between runs, and alternating keeps
# each pair measured under the same conditions.
set -euo pipefail
cd "$(dirname "$0")/../.."
DUR=${1:-15}
CONNS=${2:-64}
ROUNDS=${3:-1}
OUT=${OUT:-$PWD/out/load}
SIMPORT=19500
GATE=127.0.0.1:18900
NGINX=127.0.0.1:18901
for tool in wrk nginx curl; do
  command -v "$tool" >/dev/null || { echo "load.sh: $tool is not installed (apt-get install wrk nginx-light curl)" >&2; exit 2; }
done
rm -rf "$OUT" && mkdir -p "$OUT/www" "$OUT/data"
go build -o "$OUT/searxgate" ./cmd/searxgate

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

# Four healthy instances answering at once (latency scaled to microseconds).
"$OUT/searxgate" sim --n 4 --mix healthy --seed 1 --port $SIMPORT --latency-scale 0.0001 \
  --write-directory "$OUT/instances.json" >"$OUT/sim.log" 2>&1 &
sim=$!
pids+=($sim)
for _ in $(seq 100); do [ -s "$OUT/instances.json" ] && break; sleep 0.05; done

# searxgate with its politeness and client limits lifted: this measures the
# gateway, not the budgets.
GODEBUG=gctrace=1 "$OUT/searxgate" serve --listen $GATE --directory "$OUT/instances.json" --allow-private \
  --data "$OUT/data" --budget-20s 0 --budget-10m 0 --client-rate 0 \
  --max-in-flight 256 --max-conns-per-ip 0 --log-level info >"$OUT/gate.log" 2>&1 &
gate=$!
pids+=($gate)
for _ in $(seq 100); do curl -sf "http://$GATE/healthz" >/dev/null && break; sleep 0.05; done

# Warm up: let searxgate read every instance's /config and results page, so
# that it asks them for JSON as it would in steady state.
for i in $(seq 40); do curl -s -o /dev/null "http://$GATE/search?format=json&q=warm+$i"; done
sleep 1
for i in $(seq 40); do curl -s -o /dev/null "http://$GATE/search?format=json&q=warm+again+$i"; done
curl -s "http://$GATE/search?format=json&q=hello+world" >"$OUT/www/static.json"

cat >"$OUT/nginx.conf" <<NGINX
worker_processes auto;
daemon off;
pid $OUT/nginx.pid;
error_log $OUT/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  upstream sim { server 127.0.0.1:$SIMPORT; keepalive 128; }
  server {
    listen $NGINX;
    location = /static.json { root $OUT/www; default_type application/json; }
    # Ask the instance for gzip as searxgate does, so that both make it
    # do the same work; nginx passes the compressed body through.
    location /search { proxy_pass http://sim; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header Accept-Encoding gzip; }
  }
}
NGINX
nginx -c "$OUT/nginx.conf" -p "$OUT" &
ngx=$!
pids+=($ngx)
for _ in $(seq 100); do curl -sf "http://$NGINX/static.json" >/dev/null && break; sleep 0.05; done

# cpu PID...: user+system CPU time of the processes, in clock ticks.
cpu() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14+$15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo $t; }
nginxpids() { echo "$ngx" $(pgrep -P "$ngx"); }
rps() { awk '/Requests\/sec/ {print $2}' "$OUT/$1.txt"; }
run() { # name url [script]
  local name=$1 url=$2 script=${3:-}
  echo "== $name: wrk -t2 -c$CONNS -d${DUR}s --latency ${script:+-s $script }$url" >&2
  local g0 n0 s0 g1 n1 s1
  g0=$(cpu "$gate"); n0=$(cpu $(nginxpids)); s0=$(cpu "$sim")
  wrk -t2 -c"$CONNS" -d"${DUR}s" --latency ${script:+-s "$script"} "$url" | tee "$OUT/$name.txt" >&2
  g1=$(cpu "$gate"); n1=$(cpu $(nginxpids)); s1=$(cpu "$sim")
  # CPU per 1,000 requests (ms) of the server under test and of the sim.
  awk -v n="$name" -v g=$((g1 - g0)) -v x=$((n1 - n0)) -v s=$((s1 - s0)) -v hz="$(getconf CLK_TCK)" '
    /requests in/ {reqs=$1}
    /Requests\/sec/ {rps=$2}
    /^ +50%/ {p50=$2} /^ +99%/ {p99=$2}
    /Non-2xx/ {non2xx=$NF}
    END {
      srv = (n ~ /nginx/) ? x : g
      printf "| %s | %s | %s | %s | %s | %.1f | %.1f |\n", n, rps, p50, p99, (non2xx==""?0:non2xx),
        1e6*srv/hz/reqs, 1e6*s/hz/reqs}' "$OUT/$name.txt"
}
# rss PID: resident memory, anonymous (the Go heap, stacks) apart from
# file-backed (mostly searxgate.db's mapping: page cache the kernel may drop).
rss() { awk '/^VmRSS/ {t=$2} /^RssAnon/ {a=$2} /^RssFile/ {f=$2} /^RssShmem/ {s=$2}
  END {printf "%.1f MiB (anonymous %.1f MiB, file-backed %.1f MiB, shared %.1f MiB)", t/1024, a/1024, f/1024, s/1024}' "/proc/$1/status"; }
# heap: the Go heap from searxgate's GC trace (GODEBUG=gctrace=1): live
# after the last collection, and the largest at the start of one, against
# the soft memory limit searxgate sets at start from its caches' bounds
# and a fixed margin (its log says limit_mib).
heap() { awk '/limit_mib=/ {for (i = 1; i <= NF; i++) if ($i ~ /^limit_mib=/) {split($i, l, "="); bound = l[2]}}
  /^gc [0-9]+ @/ {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+->[0-9]+->[0-9]+$/) {split($i, h, "->"); live = h[3]; if (h[1] + 0 > peak) peak = h[1] + 0}; n++}
  END {printf "Go heap: %d MiB live after the last of %d collections, at most %d MiB at the start of one; memory limit %s MiB (caches and margin): %s", live, n, peak, bound, (bound != "" && peak <= bound ? "within" : "OVER")}' "$OUT/gate.log"; }

echo "searxgate RSS before: $(rss $gate)" >&2
{
  echo "| run | requests/s | p50 | p99 | non-2xx | server CPU ms/1k req | sim CPU ms/1k req |"
  echo "|---|---|---|---|---|---|---|"
  for round in $(seq "$ROUNDS"); do
    run hit-searxgate "http://$GATE/search?format=json&q=hello+world"
    run hit-nginx-static "http://$NGINX/static.json"
    run miss-searxgate "http://$GATE" sim/load/miss.lua
    run miss-nginx-proxy "http://$NGINX" sim/load/miss.lua
    echo "$round $(rps hit-searxgate) $(rps hit-nginx-static) $(rps miss-searxgate) $(rps miss-nginx-proxy)" >>"$OUT/rounds.txt"
  done
  echo
  echo "| round | hits, searxgate / nginx static | misses, searxgate / nginx proxy_pass |"
  echo "|---|---|---|"
  awk '{h[NR]=$2/$3; m[NR]=$4/$5; printf "| %d | %.3f | %.3f |\n", $1, h[NR], m[NR]}
    function median(a, n,   i, j, t) {
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    END {printf "| median | %.3f | %.3f |\n", median(h, NR), median(m, NR)}' "$OUT/rounds.txt"
} >"$OUT/results.md"
{ echo; echo "searxgate RSS after: $(rss $gate)"; echo; echo "$(heap)"; } | tee -a "$OUT/results.md" >&2
cat "$OUT/results.md"
