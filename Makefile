# CortexM Lens: `make run` opens the tool, `make test` runs every test. Both set up from nothing.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export QT_QPA_PLATFORM ?= offscreen

.PHONY: setup run test sysdeps bench clean

setup: sysdeps $(STAMP)

sysdeps:
	@bash scripts/install_sysdeps.sh

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

run: setup
	$(VENV)/bin/cmlens gui

test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

bench: setup
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .cmlens-cache
