# CortexM Lens: `make run` opens the tool, `make test` runs the import contracts, ruff, mypy and every test. Both set up
# from nothing.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Real model code the default suite lowers (issue 38's small transformer encoders; issue 46's braindecode EEGNet,
# pytorch-tcn TCN and speechbrain ECAPA-TDNN): installed with --no-deps into a folder outside the venv, as a
# user would, pinned by constraints.txt, and put on the tests' PYTHONPATH.
MODEL_LIBS ?= .model-libs
MODEL_LIB_PKGS := transformers \
  braindecode skorch mne mne-bids pydantic pydantic-core annotated-types typing-inspection einops torchinfo h5py \
  wfdb docstring-inheritance docstring-parser linear-attention-transformer local-attention hyper-connections \
  linformer product-key-memory colt5-attention axial-positional-embedding lazy-loader pooch platformdirs \
  decorator tabulate pytorch-tcn torchaudio speechbrain hyperpyyaml ruamel.yaml ruamel.yaml.clib
MODEL_LIBS_STAMP := $(MODEL_LIBS)/.installed

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

$(MODEL_LIBS_STAMP): constraints.txt | $(STAMP)
	$(PY) -m pip install --quiet --no-deps --target $(MODEL_LIBS) -c constraints.txt $(MODEL_LIB_PKGS)
	@touch $(MODEL_LIBS_STAMP)

test: setup $(MODEL_LIBS_STAMP)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	PYTHONPATH=$(abspath $(MODEL_LIBS)) HF_HUB_OFFLINE=1 QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -n 2 --dist loadfile --durations=15 $(PYTEST_ARGS)

bench: setup
	@for b in bench/*.py; do echo "== $$b"; QT_QPA_PLATFORM=offscreen $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .cmlens-cache $(MODEL_LIBS)
