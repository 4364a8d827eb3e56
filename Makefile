# searxgate: make with no target prints this help.
GO      ?= go
BIN     ?= bin/searxgate
PKGS    ?= ./...
BENCHTIME ?= 1s

.DEFAULT_GOAL := help

.PHONY: help build test vet fmt-check unit bench run clean

help: ## list the targets
	@awk 'BEGIN{FS=":.*## "} /^[a-z][a-z0-9-]*:.*## /{printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/searxgate
	$(GO) build -o $(BIN) ./cmd/searxgate

test: vet fmt-check unit ## vet, gofmt check and every test under -race (what CI runs)

vet: ## go vet
	$(GO) vet $(PKGS)

fmt-check: ## fail when gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

unit: ## go test -race over every package
	$(GO) test -race -count=1 $(PKGS)

bench: ## every benchmark, with allocations
	$(GO) test -run='^$$' -bench=. -benchmem -benchtime=$(BENCHTIME) $(PKGS)

run: ## run searxgate with its defaults (pass flags with ARGS="...")
	$(GO) run ./cmd/searxgate $(ARGS)

clean: ## remove build output
	rm -rf bin
