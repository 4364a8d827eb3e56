#!/usr/bin/env bash
# The image test (make image-test, part of make test): builds the image with
# `make image`, checks what it carries (HEALTHCHECK, labels, a numeric
# non-root user, /data, port 8888), and, where a container runtime can run
# it, starts it on the host network against a sim fleet on 127.0.0.1,
# waits for its health check to pass, searches through it, and stops it.
#
# Without podman or docker it skips, saying so. With CI=true it fails
# instead wherever it should be able to run: .ci/run installs podman and
# runc, and runs as root.
#
# On these machines rootful podman runs the image with --runtime runc
# --cgroup-manager=cgroupfs and a containers.conf that empties
# default_ulimits (crun fails on their cgroup layout); the test writes that
# file in its own temporary folder and points CONTAINERS_CONF at it.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "image-test: $*"; }
skip() {
	if [ "${CI:-}" = true ]; then
		say "FAIL: $* (CI=true: the image test must run here)" >&2
		exit 1
	fi
	say "SKIP: $*"
	exit 0
}
fail() {
	say "FAIL: $*" >&2
	exit 1
}

runtime=${CONTAINER:-}
if [ -z "$runtime" ]; then
	runtime=$(command -v podman 2>/dev/null || command -v docker 2>/dev/null || true)
fi
[ -n "$runtime" ] || skip "no container runtime (apt-get install podman runc)"
kind=$(basename "$runtime")

tmp=$(mktemp -d)
tag="imagetest-$$"
image="localhost/searxgate-imagetest"
name="searxgate-imagetest-$$"
sim_pid=
cleanup() {
	set +e
	if [ -n "${ct_ran:-}" ]; then
		"${rt[@]}" rm -f -v "$name" >/dev/null 2>&1
	fi
	[ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null
	"$runtime" rmi -f "$image:$tag" "$image:latest" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# What runs the image. podman: rootful, runc, cgroupfs, the ulimits emptied.
rt=("$runtime")
if [ "$kind" = podman ]; then
	printf '[containers]\ndefault_ulimits = []\n' >"$tmp/containers.conf"
	export CONTAINERS_CONF="$tmp/containers.conf"
	rt=(podman --runtime runc --cgroup-manager=cgroupfs)
elif ! docker info >/dev/null 2>&1; then
	skip "docker is only a client here (no engine answers docker info); install podman and runc"
fi

say "building the image with $kind (make image)"
make --no-print-directory image CONTAINER="$runtime" IMAGE="$image" IMAGE_TAG="$tag" >"$tmp/build.log" 2>&1 ||
	{ tail -30 "$tmp/build.log" >&2; fail "make image failed"; }

# What the image carries.
inspect() { "$runtime" image inspect --format "$1" "$image:$tag"; }
if [ "$kind" = podman ]; then
	hc=$(inspect '{{json .HealthCheck}}')
else
	hc=$(inspect '{{json .Config.Healthcheck}}')
fi
case "$hc" in *'"searxgate","healthcheck"'* | *'searxgate","healthcheck'*) ;; *) fail "no HEALTHCHECK running searxgate healthcheck: $hc" ;; esac
user=$(inspect '{{.Config.User}}')
case "$user" in 0 | 0:* | root* | "" | *[!0-9:]*) fail "the image's user is $user, not a numeric non-root one" ;; esac
for label in version revision source; do
	v=$(inspect "{{index .Config.Labels \"org.opencontainers.image.$label\"}}")
	[ -n "$v" ] && [ "$v" != unknown ] && [ "$v" != "<no value>" ] || fail "label org.opencontainers.image.$label is ${v:-empty}"
done
version=$(inspect '{{index .Config.Labels "org.opencontainers.image.version"}}')
revision=$(inspect '{{index .Config.Labels "org.opencontainers.image.revision"}}')
[ "$(inspect '{{json .Config.ExposedPorts}}')" = '{"8888/tcp":{}}' ] || fail "the image does not expose 8888 alone"
[ "$(inspect '{{json .Config.Volumes}}')" = '{"/data":{}}' ] || fail "the image has no /data volume"
say "image $image:$tag: user $user, version $version, revision $revision, HEALTHCHECK set"

# Can it run here?
if [ "$kind" = podman ]; then
	[ "$(id -u)" = 0 ] || skip "rootless podman is not tried here; run as root"
	command -v runc >/dev/null 2>&1 || skip "no runc (apt-get install runc): crun cannot run containers on this cgroup layout"
fi
if ! out=$("${rt[@]}" run --rm --network host "$image:$tag" version 2>"$tmp/run.err"); then
	cat "$tmp/run.err" >&2
	skip "$kind cannot run a container here"
fi
[ "$out" = "searxgate $version revision $revision" ] || fail "searxgate version in the image printed '$out', want 'searxgate $version revision $revision'"
say "searxgate version in the image: $out"

# A sim fleet on 127.0.0.1, on ports the kernel picks.
make --no-print-directory build BIN="$tmp/searxgate" >/dev/null
"$tmp/searxgate" sim --n 5 --mix healthy --seed 1 --port 0 --write-directory "$tmp/instances.json" >"$tmp/sim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do [ -s "$tmp/instances.json" ] && break; sleep 0.1; done
[ -s "$tmp/instances.json" ] || { cat "$tmp/sim.log" >&2; fail "the sim fleet did not start"; }
chmod 0644 "$tmp/instances.json"

# A free loopback port for searxgate: one nothing answers on.
port=
for _ in $(seq 50); do
	p=$((20000 + RANDOM % 20000))
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		port=$p
		break
	fi
done
[ -n "$port" ] || fail "no free port found"

ct_ran=1
"${rt[@]}" run -d --name "$name" --network host \
	-e SEARXGATE_LISTEN="127.0.0.1:$port" -e SEARXGATE_DIRECTORY=/instances.json -e SEARXGATE_ALLOW_PRIVATE=true \
	-e SEARXGATE_CONTACT=image-test@example.org \
	-v "$tmp/instances.json:/instances.json:ro" "$image:$tag" >/dev/null 2>"$tmp/run.err" ||
	{ cat "$tmp/run.err" >&2; fail "the container did not start"; }

# podman runs the image's HEALTHCHECK on demand; docker has no such
# command, so the test runs what the HEALTHCHECK runs.
health() {
	if [ "$kind" = podman ]; then
		"${rt[@]}" healthcheck run "$name"
	else
		"${rt[@]}" exec "$name" /usr/local/bin/searxgate healthcheck
	fi
}
healthy=
for _ in $(seq 60); do
	if health >/dev/null 2>&1; then
		healthy=1
		break
	fi
	sleep 0.25
done
if [ -z "$healthy" ]; then
	"${rt[@]}" logs "$name" >&2 || true
	fail "the health check did not pass within 15 s"
fi
say "health check passed (searxgate on 127.0.0.1:$port in the container)"

# A search through the container, answered by a sim instance.
if ! curl -sS -o "$tmp/answer.json" -D "$tmp/answer.head" --max-time 10 \
	"http://127.0.0.1:$port/search?q=container+test&format=json"; then
	"${rt[@]}" logs "$name" >&2 || true
	fail "the search did not answer"
fi
status=$(head -1 "$tmp/answer.head" | tr -d '\r')
case "$status" in *" 200"*) ;; *)
	cat "$tmp/answer.json" >&2
	"${rt[@]}" logs "$name" >&2 || true
	fail "the search answered $status"
	;;
esac
instance=$(grep -i '^x-searxgate-instance:' "$tmp/answer.head" | tr -d '\r' | cut -d' ' -f2-)
grep -qF "\"${instance%/}" "$tmp/instances.json" || fail "the answer came from '$instance', not a sim instance"
grep -q '"results": *\[ *{' "$tmp/answer.json" || fail "the answer has no results: $(head -c 300 "$tmp/answer.json")"
say "a search through the container was answered by $instance"

# A clean stop: SIGTERM, what it learned written to /data, exit 0.
"${rt[@]}" stop -t 15 "$name" >/dev/null
code=$("${rt[@]}" inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || { "${rt[@]}" logs "$name" >&2; fail "the container exited $code on SIGTERM, not 0"; }
"${rt[@]}" logs "$name" 2>&1 | grep -q 'msg=stopped' || { "${rt[@]}" logs "$name" >&2; fail "searxgate did not log its clean stop"; }
# What it learned is in the /data volume, written by the image's user.
"${rt[@]}" cp "$name:/data/searxgate.db" "$tmp/searxgate.db" 2>"$tmp/cp.err" || { cat "$tmp/cp.err" >&2; fail "no /data/searxgate.db in the container"; }
[ -s "$tmp/searxgate.db" ] || fail "/data/searxgate.db is empty"
say "PASS: built, healthy, searched through, stopped cleanly, its data in /data"
