# agentdesk: the usual tasks. `make help` lists them.
GO      ?= go
BIN     ?= bin/agentdesk
# The version from git tags: v0.3.0 gives 0.3.0, two commits later 0.3.0-2-gabc1234, an
# untagged tree "dev". COMMIT is the commit built (-dirty with changes), DATE the build's time.
VERSION ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null | sed 's/^v//' | grep . || echo dev)
COMMIT  ?= $(shell git describe --always --dirty --abbrev=12 --exclude '*' 2>/dev/null || echo unknown)
DATE    ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
VERSION := $(VERSION)
COMMIT  := $(COMMIT)
DATE    := $(DATE)
VERSION_PKG := github.com/agentdesk/agentdesk/backend/version
LDFLAGS := -s -w -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Commit=$(COMMIT) -X $(VERSION_PKG).Date=$(DATE)
DATA    ?=
ADDR    ?= 127.0.0.1:8080

.PHONY: help ui build run test test-ui test-desktop wsclient mcpclients a2aclients mcp-inspect race bench bench-scale soak crashloop fuzz desktop package test-package release licenses vet fmt clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-13s %s\n", $$1, $$2}'

ui: ## the web UI (frontend/dist, embedded in the binary): npm ci && npm run build
	cd frontend && npm ci --no-audit --no-fund && npm run build

build: ui ## the server binary with the web UI (pure Go, no cgo)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) .

run: build ## run the headless server on $(ADDR) (data: $$AGENTDESK_DATA or the OS data directory)
	./$(BIN) --serve --addr $(ADDR) $(if $(DATA),--data $(DATA))

test: wsclient mcpclients a2aclients build ## every test: vet, format check, Go tests (with fuzz seed corpora), the web UI's tests
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt would change:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	AGENTDESK_REQUIRE_WSCLIENT=1 AGENTDESK_REQUIRE_MCPCLIENTS=1 AGENTDESK_REQUIRE_A2ACLIENTS=1 $(GO) test -count=1 ./...
	$(MAKE) race
	$(MAKE) test-ui
	$(MAKE) test-desktop

test-ui: ## the web UI: Vitest, the bundle budget, then Playwright (Debian's chromium) against $(BIN)
	cd frontend && npm test && AGENTDESK_BIN=$(abspath $(BIN)) npm run e2e

wsclient: ## the npm clients the GraphQL tests run: graphql-ws (subscriptions), graphql-http's audit (needs node and npm)
	npm ci --prefix backend/graphql/testdata/wsclient --no-audit --no-fund
	npm ci --prefix backend/graphql/testdata/httpaudit --no-audit --no-fund

# The Inspector's package.json holds vite (which only its web client uses) at 8.3.8:
# 8.4's optional napi-windows-process-start-time is missing from the registry, and npm ci
# refuses a lockfile without it.
INSPECTOR := backend/mcp/testdata/inspector
mcpclients: ## the npm MCP clients backend/mcp's tests run: the TypeScript SDK and the MCP Inspector (needs node and npm)
	npm ci --prefix backend/mcp/testdata/nodeclient --no-audit --no-fund
	npm ci --prefix $(INSPECTOR) --no-audit --no-fund

a2aclients: ## the npm A2A client backend/a2a's tests run: the JavaScript SDK, @a2a-js/sdk (needs node and npm)
	npm ci --prefix backend/a2a/testdata/jsclient --no-audit --no-fund

# The agent variables and AGENTDESK_TOKEN of this shell, handed to agentdesk mcp as an MCP
# client's config does (the Inspector gives a stdio server no other environment).
MCP_ENV := AGENTDESK_URL AGENTDESK_DATA AGENTDESK_TOKEN SERVICE_PROJECT_ID AGENT_NAME SERVICE_API_TOKEN SERVICE_TOKEN_SECRET SERVICE_NAMESPACE
mcp-inspect: $(INSPECTOR)/node_modules/.package-lock.json ## the MCP Inspector's CLI lists the tools bin/agentdesk mcp offers this shell's credentials (agentdesk agent env, or AGENTDESK_TOKEN)
	@test -x $(BIN) || { echo "$(BIN) is missing: make build"; exit 1; }
	@# Not echoed: the command line holds the credentials.
	@node $(INSPECTOR)/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js --cli \
	  $(foreach v,$(MCP_ENV),$(if $($(v)),-e '$(v)=$($(v))')) $(abspath $(BIN)) mcp --method tools/list

$(INSPECTOR)/node_modules/.package-lock.json: $(INSPECTOR)/package-lock.json
	npm ci --prefix $(INSPECTOR) --no-audit --no-fund

race: ## the concurrency test (8 agents, 8 users, 20 s) under the race detector (needs gcc)
	CGO_ENABLED=1 $(GO) test -race -count=1 -run 'TestConcurrentAgentsAndUsers|TestGroupCommit' ./backend/client/ ./backend/store/

bench: build ## load benchmarks over HTTP on loopback; ends with one JSON line of figures (DB=postgres://… : on that empty PostgreSQL database; INSTANCES=2: two servers on it)
	$(if $(DB),AGENTDESK_DB='$(DB)' )$(GO) run ./backend/bench -bin $(BIN)$(if $(INSTANCES), -instances $(INSTANCES))

bench-scale: build ## the scale mode: 1,000,000 tasks beside 10,000, the same reads timed on both (minutes)
	$(GO) run ./backend/bench -bin $(BIN) -scale 1000000

SCALE ?= 1000000
.PHONY: bench-ui-scale bench-prune
bench-ui-scale: build ## the board of $(SCALE) tasks in Playwright: seeded in the store (1.6 GB in /tmp, removed after), then that e2e flow alone (minutes)
	dir=$$(mktemp -d /tmp/agentdesk-ui-scale-XXXXXX) && trap 'rm -rf "$$dir"' EXIT && \
	$(GO) run ./backend/bench -bin $(BIN) -scale $(SCALE) -scale-seed "$$dir" && \
	cd frontend && AGENTDESK_BIN=$(abspath $(BIN)) AGENTDESK_E2E_DATA="$$dir" node e2e/run.mjs 'seeded in the store'

bench-prune: build ## event and activity pruning with $(SCALE) tasks' rows expired: each pass's time, creates during it, RSS (minutes)
	$(GO) run ./backend/bench -bin $(BIN) -scale $(SCALE) -scale-prune

DURATION ?= 1h
soak: build ## $(DURATION) of steady mixed load with 200 subscribers and the reference agent; prints each minute, ends with a JSON line
	$(GO) run ./backend/bench -bin $(BIN) -soak $(DURATION)

ROUNDS  ?= 50
crashloop: ## $(ROUNDS) kill -9 at random moments under mixed load, each restart checked (make test runs 5)
	AGENTDESK_CRASHLOOP_ROUNDS=$(ROUNDS) $(GO) test -count=1 -timeout 60m -run '^TestCrashLoop$$' -v .

fuzz: ## explore the request decoders and the GraphQL handler for a minute each
	$(GO) test ./backend/api -run XXX -fuzz FuzzCreateTask -fuzztime 60s
	$(GO) test ./backend/api -run XXX -fuzz FuzzStatus -fuzztime 60s
	$(GO) test ./backend/api -run XXX -fuzz FuzzKeysAsSpelt -fuzztime 60s
	$(GO) test ./backend/graphql -run XXX -fuzz FuzzGraphQL -fuzztime 60s

desktop: ui ## the desktop window, bin/agentdesk-desktop (needs cgo, libgtk-3-dev, libwebkit2gtk-4.1-dev)
	CGO_ENABLED=1 $(GO) build -tags desktop,production,webkit2_41 -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)-desktop .

test-desktop: ## the desktop smoke test: the window under Xvfb, its screenshot in bin/desktop-smoke.png
	$(GO) vet -tags desktop,production,webkit2_41 ./app/
	$(GO) vet -tags desktopsmoke ./app/
	$(GO) test -count=1 -timeout 10m -tags desktopsmoke -run TestDesktopSmoke -v ./app/

# The .deb and .rpm (build/nfpm.yaml). A package version starts with a digit: tag v1.2.3
# gives 1.2.3, 3 commits later 1.2.3+3.gHASH; an untagged tree 0.0.0+git.HASH.
NFPM        ?= $(GO) run github.com/goreleaser/nfpm/v2/cmd/nfpm@v2.45.2
DEB_ARCH    ?= $(shell $(GO) env GOARCH)
DEB_VERSION ?= $(shell case '$(VERSION)' in ([0-9]*.[0-9]*) echo '$(VERSION)' | sed 's/-/+/; s/-/./g';; (*) echo '0.0.0+git.$(COMMIT)' | tr - .;; esac)
DEB_VERSION := $(DEB_VERSION)
DEB         := bin/agentdesk_$(DEB_VERSION)_$(DEB_ARCH).deb
# nfpm PACKAGER TARGET: a package of bin/agentdesk-desktop.
nfpm = DEB_VERSION='$(DEB_VERSION)' DEB_ARCH='$(DEB_ARCH)' $(NFPM) package --config build/nfpm.yaml --packager $(1) --target $(2)

bin/package/agentdesk.service: build/linux/agentdesk.service
	mkdir -p bin/package
	sed 's#/usr/local/bin/agentdesk#/usr/bin/agentdesk#g' $< > $@

package: desktop bin/package/agentdesk.service ## the .deb: the desktop binary as /usr/bin/agentdesk, its .desktop entry and icon, the systemd unit for --serve, the copyright
	rm -f bin/agentdesk_*.deb
	$(call nfpm,deb,$(DEB))
	@echo "built $(DEB)"

test-package: package ## as root on Debian: dpkg -i the .deb, the desktop smoke test on the installed /usr/bin/agentdesk, dpkg -r
	dpkg -i $(DEB)
	AGENTDESK_DESKTOP_BIN=/usr/bin/agentdesk $(GO) test -count=1 -timeout 10m -tags desktopsmoke -run 'TestDesktopSmoke|TestInstalledPackage' -v ./app/; \
	  status=$$?; dpkg -r agentdesk; exit $$status

# The server is pure Go and cross-compiles; the desktop window needs cgo and is built on
# Linux only (app/desktop.go has the desktop tag), so the archives hold the headless server.
RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64
DIST := dist
release: ui desktop bin/package/agentdesk.service ## dist/: the server for linux, darwin (amd64, arm64) and windows (amd64) (.tar.gz, .zip for windows), the desktop app's .deb and .rpm (this machine's arch), SHA256SUMS
	rm -rf $(DIST) && mkdir -p $(DIST)
	set -e; for p in $(RELEASE_PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; name=agentdesk_$(VERSION)_$${os}_$${arch}; exe=agentdesk; \
	  [ $$os != windows ] || exe=agentdesk.exe; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(DIST)/$$name/$$exe .; \
	  cp LICENSE README.md CHANGELOG.md docs/licenses.md $(DIST)/$$name/; \
	  if [ $$os = windows ]; then (cd $(DIST) && zip -qr $$name.zip $$name); else tar -C $(DIST) -czf $(DIST)/$$name.tar.gz $$name; fi; \
	  rm -rf $(DIST)/$$name; \
	done
	$(call nfpm,deb,$(DIST)/agentdesk_$(DEB_VERSION)_$(DEB_ARCH).deb)
	$(call nfpm,rpm,$(DIST)/)
	cd $(DIST) && sha256sum * > SHA256SUMS
	ls -l $(DIST)

licenses: ## docs/licenses.md: the licenses of the Go modules and npm packages the binary carries (TestLicenses checks it)
	$(GO) run ./build/licenses > docs/licenses.md

vet: ## go vet
	$(GO) vet ./...

fmt: ## gofmt the tree
	gofmt -w $$(git ls-files '*.go')

clean: ## remove build output
	rm -rf bin $(DIST)
