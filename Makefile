# Two commands a newcomer needs: `make report` (the main job) and `make test`.
# Each creates .venv and installs the package into it on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export PYTHONUNBUFFERED := 1

.PHONY: setup report test test-fast clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install -e '.[test]'
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

report: $(STAMP)  ## run the benchmark notebooks for this machine and build reports/index.html
	$(BIN)/python -m bench_utils report $(PARAMS)

test: $(STAMP)  ## the whole suite, as CI runs it
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: $(STAMP)  ## skip full-size models and long compiles
	$(BIN)/python -m pytest -m 'not slow' $(PYTEST_ARGS)

clean:
	rm -rf reports/*/ reports/index.html .cache
