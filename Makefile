# CortexM Lens: `make run` opens the tool, `make test` runs every test. Both set up from nothing.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup run test sysdeps bench clean

setup: sysdeps $(STAMP)

sysdeps:
	@bash scripts/install_sysdeps.sh

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

run: setup
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY$$QT_QPA_PLATFORM" ]; then \
	  echo "No display (DISPLAY/WAYLAND_DISPLAY unset): running the headless job instead of the GUI."; \
	  echo "  (GUI screenshots without a display: QT_QPA_PLATFORM=offscreen cmlens gui ds_cnn --screenshot out.png)"; \
	  $(VENV)/bin/cmlens lower ds_cnn; \
	else $(VENV)/bin/cmlens gui; fi

test: setup
	$(VENV)/bin/lint-imports
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n 2 --dist loadfile --durations=15 $(PYTEST_ARGS)

bench: setup
	@for b in bench/*.py; do echo "== $$b"; QT_QPA_PLATFORM=offscreen $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .cmlens-cache
