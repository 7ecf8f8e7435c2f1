# `make demo` and `make test` do all the set-up: they create or update .venv, then run.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: demo test test-fast lab bench clean
LAB_PORT ?= 8888

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# torch first and pinned: a CPU build of 2.13.0 lies on this project's machines, any other
# version would pull a multi-GB CUDA build. numpy explicitly: neither torch nor triton needs it.
$(INSTALLED): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet numpy -e '.[test]'
	mkdir -p $(VENV)/share/jupyter/lab/settings
	echo '{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}' \
		> $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $(INSTALLED)

demo: $(INSTALLED)
	@echo "== The reference solutions, graded on the CPU =="
	@$(BIN)/triton-course check solutions/
	@echo
	@echo "== A student's submission (notebooks and .py files) with typical mistakes =="
	@$(BIN)/triton-course check examples/student/ || true

# JupyterLab on the puzzles, kernels in Triton's interpreter (TRITON_INTERPRET=1 before anything imports triton).
lab: $(INSTALLED)
	@echo "Open the address below (with its token) in a browser; Ctrl+C stops JupyterLab."
	@TRITON_INTERPRET=1 $(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=$(LAB_PORT) \
		--ServerApp.root_dir=$(CURDIR)/puzzles $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

# One pytest process a core (pytest-xdist), each taking whole test files: a file's fixtures (a graded corpus,
# a Jupyter server) are made once. Grading mostly waits on its sandboxed workers, so one process leaves cores idle.
test: $(INSTALLED)
	$(BIN)/python -m pytest -q -n auto --dist loadfile

test-fast: $(INSTALLED)
	$(BIN)/python -m pytest -q -n auto --dist loadfile -m "not slow"

bench: $(INSTALLED)
	$(BIN)/python bench/interpreter_overhead.py
	$(BIN)/python bench/check_latency.py

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
