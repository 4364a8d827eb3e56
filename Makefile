# searxgate: make with no target prints this help.
GO      ?= go
BIN     ?= bin/searxgate
PKGS    ?= ./...
BENCHTIME ?= 1s

# VERSION is what `searxgate version` and the User-Agent say: git describe
# on a tag (v0.2.0, v0.2.0-3-gabc1234-dirty), 0.1.0-dev+<commit>[-dirty]
# between tags, 0.1.0-dev outside a git checkout. Override: make VERSION=...
VERSION ?= ${shell v=$$(git describe --tags --always --dirty 2>/dev/null); \
	case "$$v" in "") echo 0.1.0-dev;; v[0-9]*|[0-9]*.*) echo "$$v";; *) echo "0.1.0-dev+$$v";; esac}
# REVISION is the commit, with -dirty when tracked files changed: `searxgate
# version` and the image's org.opencontainers.image.revision say it.
REVISION ?= ${shell r=$$(git rev-parse HEAD 2>/dev/null) && { git diff --quiet HEAD 2>/dev/null || r="$$r-dirty"; }; echo "$$r"}
LDFLAGS ?= -X main.Version=$(VERSION) -X main.Revision=$(REVISION)

.DEFAULT_GOAL := help

.PHONY: help build test vet fmt-check lint unit e2e systemd-check image image-test bench bench-routing run demo clean

help: ## list the targets
	@awk 'BEGIN{FS=":.*## "} /^[a-z][a-z0-9-]*:.*## /{printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/searxgate
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/searxgate

# make test runs every step even when one fails, then lists what was
# skipped and why (each step's "SKIP: reason" lines: a test that skipped
# itself, or left out part of itself, and the scripts' own), and fails
# when any step failed. unit runs beside the other steps: its longest
# tests wait (on processes, sim fleets, deadlines) while those use the
# cores; each step is shown once it has ended, unit last. The steps of
# TEST_ALONE (the browser test) run after, alone. Every step's output is
# kept in out/test.
TEST_STEPS = vet fmt-check lint unit e2e systemd-check image-test
TEST_ALONE = e2e
TEST_OUT ?= $(CURDIR)/out/test
test: ## vet, gofmt check, staticcheck, every test under -race, the browser test, the unit check and the image test (what CI runs), then what was skipped
	@bash -c 'set -o pipefail; out="$(TEST_OUT)"; rm -rf "$$out" && mkdir -p "$$out"; failed=; \
	quiet() { $(MAKE) --no-print-directory $$1 > "$$out/$$1.log" 2>&1; }; \
	quiet unit & unit=$$!; \
	echo "make test: unit runs beside the other steps; its output follows when it ends (and is in $$out/unit.log)"; \
	for step in $(filter-out unit $(TEST_ALONE),$(TEST_STEPS)); do \
		quiet $$step || failed="$$failed $$step"; cat "$$out/$$step.log"; \
	done; \
	wait $$unit || failed="$$failed unit"; cat "$$out/unit.log"; \
	for step in $(filter $(TEST_ALONE),$(TEST_STEPS)); do \
		$(MAKE) --no-print-directory $$step 2>&1 | tee "$$out/$$step.log" || failed="$$failed $$step"; \
	done; \
	echo; echo "make test skipped:"; \
	grep -h "SKIP: " "$$out"/*.log | sed "s|github.com/searxgate/searxgate/||; s/^/  /" | sort -u | grep . || echo "  nothing"; \
	if [ -n "$$failed" ]; then echo "make test FAILED:$$failed" >&2; exit 1; fi; echo "make test: every step passed"'

vet: ## go vet
	$(GO) vet $(PKGS)

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# staticcheck's version is go.mod's (a tool dependency): the same checks on
# every machine, fetched through the module proxy like any module.
lint: ## staticcheck, with its default checks
	$(GO) tool staticcheck $(PKGS)

unit: ## go test -race over every package (the browser test is e2e's), then a SKIP line for each test skipped
	$(GO) run ./internal/testreport $(GO) test -json -race -count=1 -skip='^TestBrowser$$' $(PKGS)

E2E_OUT ?= $(CURDIR)/out/e2e
e2e: ## the browser test: headless Chromium on searxgate and a sim fleet; screenshots in out/e2e
	@mkdir -p $(E2E_OUT) && rm -f $(E2E_OUT)/*.png
	SEARXGATE_E2E_OUT=$(E2E_OUT) $(GO) run ./internal/testreport $(GO) test -json -race -count=1 -run '^TestBrowser$$' ./cmd/searxgate
	@# The test skips itself without Chromium (outside CI): only a run leaves screenshots.
	@if ls $(E2E_OUT)/*.png >/dev/null 2>&1; then echo "screenshots in $(E2E_OUT)"; \
	else echo "the browser test was skipped (no Chromium: apt-get install chromium): no screenshots"; fi

bench: ## every micro-benchmark with allocations, then the routing benchmark on a sim fleet
	$(GO) test -run='^$$' -bench=. -skip='Routing' -benchmem -benchtime=$(BENCHTIME) $(PKGS)
	$(MAKE) bench-routing

ROUTING_SEARCHES ?= 300
bench-routing: ## searxgate vs random and round-robin clients on the same sim fleet
	$(GO) test -run='^$$' -bench=Routing -benchtime=$(ROUTING_SEARCHES)x ./proxy

# run builds and starts the binary rather than `go run`: go run exits 1
# when it is interrupted, so Ctrl-C made make report "Error 1" although
# searxgate had stopped cleanly (it exits 0 on SIGINT and SIGTERM).
run: build ## run searxgate with its defaults (pass flags with ARGS="..."); Ctrl-C stops it
	$(BIN) $(ARGS)

DEMO_DIR ?= $(CURDIR)/out/demo
# The demo's ports: the fleet takes DEMO_N ports from DEMO_SIM_PORT on (0:
# any free ones), searxgate DEMO_PORT. make demo checks they are free first.
DEMO_N        ?= 30
DEMO_SIM_PORT ?= 19000
DEMO_PORT     ?= 8888
# The demo's admin token: the docs' instance API examples read it from
# $(DEMO_DIR)/env, which the demo writes with its addresses. The demo
# starts clean (its data folder removed) unless DEMO_KEEP=1.
DEMO_ADMIN_TOKEN ?= demo
# Everything the demo shows and fetches stays on 127.0.0.1: the fleet's
# results link to pages it serves (--local-links), its thumbnails are its
# own, and searxgate's image proxy and page reader may fetch them.
demo: build ## a sim fleet and searxgate on it, offline, on 127.0.0.1, started clean (DEMO_PORT=8888 DEMO_SIM_PORT=19000 DEMO_KEEP=1)
	@DEMO_N=$(DEMO_N) DEMO_SIM_PORT=$(DEMO_SIM_PORT) DEMO_PORT=$(DEMO_PORT) bash -c '\
	taken() { (exec 3<>"/dev/tcp/127.0.0.1/$$1") 2>/dev/null; }; \
	if taken $$DEMO_PORT; then echo "make demo: port $$DEMO_PORT is taken: pick another, e.g. make demo DEMO_PORT=$$((DEMO_PORT + 10000))" >&2; exit 1; fi; \
	if [ "$$DEMO_SIM_PORT" != 0 ]; then for p in $$(seq $$DEMO_SIM_PORT $$((DEMO_SIM_PORT + DEMO_N - 1))); do \
		if [ "$$p" = "$$DEMO_PORT" ] || taken $$p; then echo "make demo: port $$p of the fleet ($$DEMO_SIM_PORT-$$((DEMO_SIM_PORT + DEMO_N - 1))) is taken: pick others, e.g. make demo DEMO_SIM_PORT=$$((DEMO_SIM_PORT + 1000)), or DEMO_SIM_PORT=0 for any free ones" >&2; exit 1; fi; \
	done; fi'
	@mkdir -p $(DEMO_DIR) && rm -f $(DEMO_DIR)/instances.json $(DEMO_DIR)/env
	@if [ -z "$(DEMO_KEEP)" ]; then rm -rf $(DEMO_DIR)/data; else echo "keeping what the last demo learned and was told (DEMO_KEEP)"; fi
	@echo "starting a fleet of $(DEMO_N) fake SearXNG instances on 127.0.0.1$(if $(filter 0,$(DEMO_SIM_PORT)),, ports $(DEMO_SIM_PORT) on)"
	@$(BIN) sim --n $(DEMO_N) --mix mixed --seed 1 --port $(DEMO_SIM_PORT) --local-links --write-directory $(DEMO_DIR)/instances.json > $(DEMO_DIR)/sim.log 2>&1 & \
	sim=$$!; trap 'kill $$sim 2>/dev/null' EXIT INT TERM; \
	for i in $$(seq 50); do [ -s $(DEMO_DIR)/instances.json ] && break; kill -0 $$sim 2>/dev/null || break; sleep 0.1; done; \
	if [ ! -s $(DEMO_DIR)/instances.json ]; then echo "make demo: the fleet did not start:" >&2; cat $(DEMO_DIR)/sim.log >&2; exit 1; fi; \
	inst=$$(awk -F'\t' '$$1 == "sim-05" { print $$2 }' $(DEMO_DIR)/sim.log); \
	{ echo "SEARXGATE=http://127.0.0.1:$(DEMO_PORT)"; echo "SEARXGATE_ADMIN_TOKEN=$(DEMO_ADMIN_TOKEN)"; \
	  echo "DEMO_INSTANCE=$$inst"; echo "DEMO_INSTANCE_ID=$$(printf %s "$$inst" | sed 's/:/%3A/g; s|/|%2F|g')"; \
	  echo "DEMO_PAGE=$${inst}sim/page/sim-05/hello/1"; } > $(DEMO_DIR)/env; \
	echo "searxgate on http://127.0.0.1:$(DEMO_PORT)/   status page: http://127.0.0.1:$(DEMO_PORT)/status   admin token: $(DEMO_ADMIN_TOKEN)"; \
	echo "in another terminal: . $(DEMO_DIR)/env && curl \"\$$SEARXGATE/search?q=hello&format=json\"   (stop with Ctrl-C)"; \
	$(BIN) serve --directory $(DEMO_DIR)/instances.json --allow-private --image-proxy-allow-private --reader-allow-private --admin-token $(DEMO_ADMIN_TOKEN) --data $(DEMO_DIR)/data --listen 127.0.0.1:$(DEMO_PORT)

systemd-check: ## systemd-analyze verify and security --offline on deploy/systemd/searxgate.service
	bash deploy/systemd/check.sh

image-test: ## build the image, run it on the host network against a sim fleet, search through it (skips without podman or docker)
	bash deploy/image-test.sh

# image: the Containerfile's FROM scratch image around a static binary built
# here, with this host's CA certificates. No registry is needed. CONTAINER
# is podman or docker, whichever is found first; podman writes OCI images by
# default, which drop HEALTHCHECK, so it builds with --format docker (and
# keeps no intermediate images: the steps are copies, cheap to redo).
IMAGE     ?= localhost/searxgate
IMAGE_TAG ?= $(subst +,-,$(VERSION))
CONTAINER ?= ${shell command -v podman 2>/dev/null || command -v docker 2>/dev/null}
CA_CERTS  ?= /etc/ssl/certs/ca-certificates.crt
IMAGE_SOURCE ?= https://github.com/searxgate/searxgate
IMAGE_DIR ?= $(CURDIR)/out/image
IMAGE_UID := 65532
image: ## build the container image localhost/searxgate:<version> and :latest (podman or docker; no registry)
	@test -n "$(CONTAINER)" || { echo "make image: neither podman nor docker is installed (apt-get install podman)" >&2; exit 1; }
	@test -s "$(CA_CERTS)" || { echo "make image: no CA certificates at $(CA_CERTS) (apt-get install ca-certificates, or make image CA_CERTS=path)" >&2; exit 1; }
	@rm -rf $(IMAGE_DIR) && mkdir -p $(IMAGE_DIR)/data
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(IMAGE_DIR)/searxgate ./cmd/searxgate
	@cp "$(CA_CERTS)" $(IMAGE_DIR)/ca-certificates.crt
	@printf 'searxgate:x:$(IMAGE_UID):$(IMAGE_UID):searxgate:/data:/nonexistent\n' > $(IMAGE_DIR)/passwd
	@printf 'searxgate:x:$(IMAGE_UID):\n' > $(IMAGE_DIR)/group
	$(CONTAINER) build $(if $(findstring podman,$(notdir $(CONTAINER))),--format docker --layers=false) -f Containerfile \
		--build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) --build-arg SOURCE=$(IMAGE_SOURCE) \
		--build-arg CREATED=$$(date -u +%Y-%m-%dT%H:%M:%SZ) \
		-t $(IMAGE):$(IMAGE_TAG) -t $(IMAGE):latest $(IMAGE_DIR)

clean: ## remove build output and the demo's state
	rm -rf bin out/image out/demo
