# tumble: two commands do everything on a fresh machine (Python 3.11, pip, gcc, make):
#   make demo   create .venv, install, run the flagship scenes, write demo/ (plot + metrics)
#   make test   create .venv, install, run the test suite
PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: venv peers demo test test-fast bench bench-stacking bench-joints lint warm clean

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

peers: $(VENV)/.peers

$(VENV)/.peers: $(VENV)/.installed
	$(BIN)/pip install -q -e '.[dev,peers]'
	touch $@

# compile every kernel once into the Numba cache so parallel test workers only load it; the tests
# of the benchmark peers (PyBullet, MuJoCo builders) need the peers extra, so the suite installs it
warm: peers
	$(BIN)/python -c "import tumble.scenes as s; w = s.build('stack3_nocache'); w.step(1/60); \
	  w = s.build('stack3_nocache', solver='shock'); w.step(1/60); w.step(1/60); \
	  import tumble as tb; w = tb.World(); b = w.add_body(tb.Box((.1, .1, .1)), position=(0, 0, 1)); \
	  w.add_joint(tb.Hinge(None, b, anchor=(0, 0, 1.1), axis=(0, 1, 0), limits=(-1, 1), \
	  motor=tb.Motor(speed=1.0))); w.step(1/60)"

demo: venv
	$(BIN)/python examples/demo.py --out demo

test: warm
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

test-fast: warm
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not slow"

bench: peers warm
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/stacking.py
	$(BIN)/python benchmarks/joints.py

# the stacking experiments of Erleben 000 (issue 3): benchmarks/results/<machine>/stacking.md + PNGs
bench-stacking: peers warm
	$(BIN)/python benchmarks/stacking.py

# chain50 and ragdolls, tumble (pgs, shock) vs PyBullet and MuJoCo: ms/step and joint drift,
# benchmarks/results/<machine>/joints.md + joints.json + joints.png
bench-joints: peers warm
	$(BIN)/python benchmarks/joints.py

lint: venv
	$(BIN)/ruff check src tests benchmarks examples

clean:
	rm -rf $(VENV) .numba_cache demo .pytest_cache
