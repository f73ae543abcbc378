# One command per chore. `make run` and `make test` set everything up first.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run
BENCH_STAMP := $(VENV)/.bench-installed
ADDR   ?= 127.0.0.1:50051
ADMIN  ?= 127.0.0.1:9464
RULES  ?= rules
CHROMIUM ?= /usr/bin/chromium
export CHROMIUM  # the browser tests launch the same one
SUDO   := $(if $(filter 0,$(shell id -u)),,sudo)
# setuptools warns at every editable install that a folder named like the package in the
# working directory may shadow it (this repository's own classifier/ is the package): a
# multi-line banner in `make run` about nothing to act on. Only a warning whose message
# starts "Editable installation" is silenced; pip's errors and other warnings still show.
QUIET_EDITABLE := PYTHONWARNINGS="ignore:Editable installation$${PYTHONWARNINGS:+,$$PYTHONWARNINGS}"

.PHONY: setup browser run test cases drift check lint typecheck spec proto proto-baseline deploy-rules schemas node-test go-client go-test java-client java-vectors java-bench bench golden clean

# Serving needs the package and its runtime dependencies only: no extras, no browser. The
# client (clients/python, its own distribution, which the server depends on) comes from the tree.
$(RUN_STAMP): pyproject.toml clients/python/pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(QUIET_EDITABLE) $(BIN)/python -m pip install -q -c constraints.txt -e clients/python -e .
	touch $(RUN_STAMP)

# Everything the tests need (it also upgrades a venv `make run` made).
$(STAMP): pyproject.toml clients/python/pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(QUIET_EDITABLE) $(BIN)/python -m pip install -q -c constraints.txt -e clients/python -e '.[dev,conformance,arrow,spark]'
	touch $(STAMP) $(RUN_STAMP)

# Without apt-get or root this says what to install, and the browser tests skip saying it too.
browser:  ## Debian's Chromium at $(CHROMIUM), for the console's browser tests
	@test -x $(CHROMIUM) || $(SUDO) sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium' \
	  || echo "make: no Chromium at $(CHROMIUM), and installing it needs apt-get and root: install Debian's chromium package (apt-get install chromium); the console's browser tests skip until then"

setup: $(STAMP) browser  ## create .venv and install the package with its dev tools (and Debian's Chromium, for the console's browser tests)

run: $(RUN_STAMP)  ## install only what serving needs, then serve the bundled rules on $(ADDR), the console and metrics on http://$(ADMIN)
	$(BIN)/classifier serve --rules $(RULES) --addr $(ADDR) --metrics-addr $(ADMIN)

# The checks before pytest run side by side (lint and mypy, go, Maven, the browser; each
# writes its own files), then pytest on two workers: most tests wait on a server, a
# subprocess or a build, so two workers on two cores finish in about two thirds of the
# time. --dist loadfile keeps a file's tests on one worker, with its module fixtures.
test: $(STAMP)  ## lint, type-check, the Go module's checks, build the Java client, then every test (tests/, the bundled rules' cases, clients/python/tests) on two workers
	$(MAKE) --no-print-directory -j4 --output-sync=target lint typecheck browser go-test java-client
	$(BIN)/pytest -n 2 --dist loadfile --durations=25

cases: $(STAMP)  ## run the bundled ruleset's cases with coverage (every rule must decide a case)
	$(BIN)/classifier test --coverage --min-coverage 100 $(RULES)

drift: $(STAMP)  ## the SDK drift check: every exception class of the pinned SDKs has a rule or a listed reason (also in make test)
	$(BIN)/python -m tests.conformance.drift
	if command -v node >/dev/null && command -v npm >/dev/null; then $(BIN)/python -m tests.conformance.drift.node; fi
	if command -v go >/dev/null; then $(BIN)/python -m tests.conformance.drift.golang; fi
	if command -v java >/dev/null && command -v mvn >/dev/null; then $(BIN)/python -m tests.conformance.drift.java; fi

check: lint typecheck  ## ruff, mypy and buf lint

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/buf lint proto

typecheck: $(STAMP)
	$(BIN)/mypy

proto: $(STAMP)  ## regenerate the Python stubs (clients/python/errorclass_client/proto, the client's; the server uses them) and the clients' copies (make spec) from proto/
	$(BIN)/python tools/gen_proto.py
	$(BIN)/python -m tools.spec
	$(BIN)/python tools/gen_go_client.py

proto-baseline: $(STAMP)  ## at a release only: record proto/ as the contract later changes must stay compatible with
	$(BIN)/buf build proto -o proto/released/errorclass-v1.binpb

spec: $(STAMP)  ## regenerate clients/spec (facts.json, the generated vectors) and every client's rendered constants from classifier/ and proto/
	$(BIN)/python -m tools.spec

schemas: $(STAMP)  ## regenerate classifier/schemas/ (JSON Schemas for editors) from the document models
	$(BIN)/python tools/gen_schemas.py
	$(BIN)/python -m tools.spec

node-test: $(STAMP)  ## the Node client's own tests alone: every vector of clients/spec, the outage test, and the client that survives the service against a real `classifier serve` of the venv (node --test; make test runs them through tests/clients/test_node_package.py)
	cd clients/node && { test -d node_modules || npm ci --no-audit --no-fund --prefer-offline; } && node --test tests/

GO_DIRS := clients/go tests/conformance/go
go-client: $(STAMP)  ## regenerate clients/go's stubs (buf generate, pinned protoc-gen-go plugins); its facts.go and version.go are `make spec`'s
	$(BIN)/python tools/gen_go_client.py

go-test: $(STAMP)  ## the Go module and the Go conformance worker: gofmt -l (empty), go vet, go test (every clients/spec vector; the bundle client against a real `classifier serve` from the venv; modules from the proxy as go.sum pins them)
	@unformatted="$$(gofmt -l $(GO_DIRS))"; test -z "$$unformatted" || { echo "gofmt -l: $$unformatted"; exit 1; }
	cd clients/go && GOFLAGS=-mod=readonly go vet ./... && GOFLAGS=-mod=readonly go test -count=1 ./...
	cd tests/conformance/go && GOFLAGS=-mod=readonly go vet ./...

JAVA_CP := $(CURDIR)/clients/java/target/test.classpath
java-client: $(STAMP)  ## build clients/java (stubs from proto/, its JUnit tests, every vector of clients/spec, under Surefire; tests against a real classifier serve) into ~/.m2, and write target/test.classpath (the failover driver's); skipped without java and mvn
	@if command -v java >/dev/null && command -v mvn >/dev/null; then \
	  mkdir -p clients/java/target; \
	  mvn -B -ntp -Dstyle.color=never -f clients/java/pom.xml dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=$(JAVA_CP) install > clients/java/target/build.log 2>&1; status=$$?; \
	  grep -E "Tests run:|BUILD|ERROR|FAIL|^vectors:|^outage " clients/java/target/build.log; exit $$status; \
	else echo "java-client: java or mvn is not on PATH; the Java client and its conformance pairs are skipped"; fi

java-vectors:  ## clients/java's VectorsTest alone: every file of clients/spec/vectors (or of the folder ERRORCLASS_SPEC_DIR names)
	mvn -q -B -ntp -f clients/java/pom.xml test -Dtest=VectorsTest -Dsurefire.failIfNoSpecifiedTests=false

deploy-rules: $(STAMP)  ## put $(RULES) into deploy/kubernetes (ConfigMap and volume items); refuses rules that do not load
	$(BIN)/python tools/gen_deploy_rules.py $(RULES)

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q -c constraints.txt -e clients/python -e '.[dev,conformance,arrow,spark,bench]'
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)  ## run every benchmark in benchmarks/ and the clients' in-process bundle evaluators (numbers, not pass/fail; a few minutes)
	for b in benchmarks/bench_*.py; do $(BIN)/python -m benchmarks.$$(basename $$b .py) || exit 1; done
	$(BIN)/python clients/python/bench/bundle.py
	if command -v go >/dev/null; then cd clients/go && GOFLAGS=-mod=readonly go run ./internal/bench; fi
	if command -v node >/dev/null && command -v npm >/dev/null; then cd clients/node && { test -d node_modules || npm ci --no-audit --no-fund --prefer-offline; } && node bench/bundle.js; fi
	$(MAKE) --no-print-directory java-bench

java-bench: $(STAMP)  ## the Java bundle evaluator in process on the bundled library beside the gRPC Classify call to a real classifier serve (started here, or the one ERRORCLASS_BENCH_ADDR names): p50, p99 per evaluation; a few seconds after the build
	@if command -v java >/dev/null && command -v mvn >/dev/null; then \
	  mvn -q -B -ntp -f clients/java/pom.xml test-compile dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=$(JAVA_CP) && \
	  java -cp clients/java/target/classes:clients/java/target/test-classes:$$(cat $(JAVA_CP)) -Derrorclass.spec.dir=clients/spec dev.errorclass.client.BundleBench; \
	else echo "java-bench: java or mvn is not on PATH; the Java evaluator's benchmark is skipped"; fi

golden: $(STAMP)  ## rewrite the golden files from the current output (review with git diff)
	UPDATE_GOLDEN=1 $(BIN)/pytest -q tests -k golden

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis *.egg-info clients/python/*.egg-info clients/python/build clients/python/dist clients/node/node_modules clients/node/*.tgz clients/java/target tests/conformance/java/target
