# asyncop — kubebuilder-style targets. `make run` and `make test` are the two a newcomer needs.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint generate bench soak install deploy docker-build helm-lint clean

# setup.py compiles the modules of compiled.txt: a change to one of them rebuilds it
$(STAMP): pyproject.toml setup.py compiled.txt $(shell grep -v '^\#' compiled.txt)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/asyncop run --embedded --install-crds --apply samples/

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check asyncop tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/asyncop generate --check
	$(BIN)/python -m asyncop.k8s.codegen --check

generate: $(STAMP)
	$(BIN)/asyncop generate

bench: $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	$(BIN)/python bench/queue.py
	$(BIN)/python bench/typed.py
	$(BIN)/python bench/apiserver.py
	$(BIN)/python bench/operator.py

# The chaos soak (docs/soak.md): MINUTES of real time, SEED for the fault schedule and workload.
MINUTES ?= 10
SEED ?= 1
soak: $(STAMP)
	$(BIN)/python bench/soak.py --minutes $(MINUTES) --seed $(SEED)

install: $(STAMP)
	$(BIN)/asyncop crds | kubectl apply -f -

deploy:
	helm upgrade --install asyncop helm/asyncop

docker-build:
	docker build -t asyncop:0.1.0 .

helm-lint: $(STAMP)
	$(BIN)/python helm/asyncop/hack/lint.py

clean:
	rm -rf $(VENV)
