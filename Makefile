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
LDFLAGS ?= -X main.Version=$(VERSION)

.DEFAULT_GOAL := help

.PHONY: help build test vet fmt-check unit e2e bench bench-routing run demo clean

help: ## list the targets
	@awk 'BEGIN{FS=":.*## "} /^[a-z][a-z0-9-]*:.*## /{printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/searxgate
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/searxgate

test: vet fmt-check unit e2e ## vet, gofmt check, every test under -race and the browser test (what CI runs)

vet: ## go vet
	$(GO) vet $(PKGS)

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

unit: ## go test -race over every package (the browser test is e2e's)
	$(GO) test -race -count=1 -skip='^TestBrowser$$' $(PKGS)

E2E_OUT ?= $(CURDIR)/out/e2e
e2e: ## the browser test: headless Chromium on searxgate and a sim fleet; screenshots in out/e2e
	@mkdir -p $(E2E_OUT) && rm -f $(E2E_OUT)/*.png
	SEARXGATE_E2E_OUT=$(E2E_OUT) $(GO) test -race -count=1 -run '^TestBrowser$$' ./cmd/searxgate
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
demo: build ## a sim fleet and searxgate on it, offline, on 127.0.0.1
	@mkdir -p $(DEMO_DIR) && rm -f $(DEMO_DIR)/instances.json
	@echo "starting a fleet of 30 fake SearXNG instances on 127.0.0.1:19000-19029"
	@$(BIN) sim --n 30 --mix mixed --seed 1 --port 19000 --write-directory $(DEMO_DIR)/instances.json > $(DEMO_DIR)/sim.log 2>&1 & \
	sim=$$!; trap 'kill $$sim 2>/dev/null' EXIT INT TERM; \
	for i in $$(seq 50); do [ -s $(DEMO_DIR)/instances.json ] && break; sleep 0.1; done; \
	echo "searxgate on http://127.0.0.1:8888/  (try: curl 'http://127.0.0.1:8888/search?q=hello&format=json')"; \
	echo "status page: http://127.0.0.1:8888/status   stop with Ctrl-C"; \
	$(BIN) serve --directory $(DEMO_DIR)/instances.json --allow-private --data $(DEMO_DIR)/data --listen 127.0.0.1:8888

clean: ## remove build output
	rm -rf bin
