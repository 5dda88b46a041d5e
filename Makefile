# tumble: two commands do everything on a fresh machine (Python 3.11, pip, gcc, make):
#   make demo   create .venv, install, run the flagship scene (tower_roof under shock), write demo/
#               (recording, MP4, plots, metrics)
#   make test   create .venv, install, run the test suite (the browser test needs Chromium: the
#               system-deps target installs Debian's package when it is missing and we are root)
PY ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: venv peers viewer system-deps demo test test-fast fuzz bench bench-stacking bench-joints bench-render bench-impulse \
	bench-fixed-cost bench-speed bench-soak bench-fem bench-gauss bench-rotation bench-sweep bench-papers lint \
	warm clean

VIEWER_WEB := src/tumble/viz/viewer/web

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

# three.js for the browser viewer (tumble view), pinned by package-lock.json, served from node_modules
viewer: $(VIEWER_WEB)/node_modules/.installed

$(VIEWER_WEB)/node_modules/.installed: $(VIEWER_WEB)/package.json $(VIEWER_WEB)/package-lock.json
	@command -v npm >/dev/null || { echo "make viewer: npm (Node.js) is needed to install three.js"; exit 1; }
	npm ci --prefix $(VIEWER_WEB) --no-audit --no-fund --loglevel=error
	touch $@

# Debian packages: Mesa's EGL + llvmpipe (headless OpenGL for tumble render) and Chromium (the
# viewer's end-to-end test); installed only when missing, and only when we may (root + apt-get)
SYSTEM_PKGS := libegl1 libgl1-mesa-dri chromium
system-deps:
	@missing=""; \
	  ldconfig -p | grep -q libEGL_mesa || missing="$$missing libegl1 libgl1-mesa-dri"; \
	  command -v chromium >/dev/null || missing="$$missing chromium"; \
	  if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	      echo "installing Debian packages:$$missing"; \
	      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	    else echo "system-deps: missing$$missing (install them with apt-get as root)"; fi; \
	  fi

# compile every kernel once into the Numba cache so parallel test workers only load it; the tests
# of the benchmark peers (PyBullet, MuJoCo builders) need the peers extra, so the suite installs it
warm: peers
	$(BIN)/python tools/warm_kernels.py

demo: venv system-deps
	$(BIN)/python examples/demo.py --out demo

test: warm viewer system-deps
	$(BIN)/python -m pytest -q -n 2 --dist loadfile

# fresh Hypothesis draws of the world fuzz (issue 17), a new seed each run (SEED=n to repeat one); `make test` replays fixed draws
fuzz: warm
	HYPOTHESIS_PROFILE=explore $(BIN)/python -m pytest -q -n 2 -p no:cacheprovider tests/physics/test_fuzz.py \
		--hypothesis-seed=$${SEED:-$$RANDOM}

test-fast: warm viewer system-deps
	$(BIN)/python -m pytest -q -n 2 --dist loadfile -m "not slow"

bench: peers warm system-deps
	$(BIN)/python benchmarks/fixed_cost.py
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/stacking.py
	$(BIN)/python benchmarks/joints.py
	$(BIN)/python benchmarks/render.py
	$(BIN)/python benchmarks/impulse.py
	$(BIN)/python benchmarks/speed.py

# issue 19's table: every row (contended ones with a busy process), tumble next to PyBullet and MuJoCo,
# the per-stage profile: benchmarks/results/<machine>/speed.md + speed.json (~15 min on 2 busy cores)
bench-speed: peers warm
	$(BIN)/python benchmarks/speed.py

# the fixed cost of a step: one free body and stack10, every solver vs PyBullet and MuJoCo, quiet and
# with a busy core: benchmarks/results/<machine>/fixed_cost.md (~2 min)
bench-fixed-cost: peers warm
	$(BIN)/python benchmarks/fixed_cost.py

# soak: pile1000 for 10^5 steps under every solver, memory and energy bounded (hours on 2 cores;
# SOAK_STEPS=10000 for a shorter run): benchmarks/results/<machine>/soak.md
SOAK_STEPS ?= 100000
bench-soak: warm
	$(BIN)/python benchmarks/soak.py --steps $(SOAK_STEPS)

# elastic bodies (paper 003): rubber_cylinders, cost per step vs tet count, RKF vs implicit, stiff
# contact, constraints: benchmarks/results/<machine>/fem.md (~5 min)
bench-fem: warm
	$(BIN)/python benchmarks/fem.py

# the impulse thesis' experiments (004 §5.1-5.6): benchmarks/results/<machine>/impulse.md + PNGs (~7 min)
bench-impulse: peers warm
	$(BIN)/python benchmarks/impulse.py

# paper 002 in the plane (tumble.gauss2d): 5x5 tower, QP back ends, time per QP vs size, claims:
# benchmarks/results/<machine>/gauss2d.md + gauss2d_collapse.png; then the 3-D gauss solver against
# shock and pgs on stack10 / pyramid20 / wall200: gauss_world.md
bench-gauss: warm
	$(BIN)/python benchmarks/gauss.py
	$(BIN)/python benchmarks/gauss_world.py

# issue 21: one table per paper (000 ... 004): every claim checked, the paper's number, ours, a verdict and
# the command of the row: benchmarks/results/<machine>/paper_000.md ... paper_004.md (~9 min on 2 busy cores)
bench-papers: warm
	$(BIN)/python benchmarks/papers.py

# the rotation integrator and the issue-18 defects (spin, slope, dominoes): rotation.md
bench-rotation: warm
	$(BIN)/python benchmarks/rotation.py

# 600 frames of two 1000-body runs rendered headless to MP4: benchmarks/results/<machine>/render.md
bench-render: venv system-deps
	$(BIN)/python benchmarks/render.py

# the stacking experiments of Erleben 000 (issue 3): benchmarks/results/<machine>/stacking.md + PNGs
bench-stacking: peers warm
	$(BIN)/python benchmarks/stacking.py

# chain50 and ragdolls, tumble (pgs, shock) vs PyBullet and MuJoCo: ms/step and joint drift,
# benchmarks/results/<machine>/joints.md + joints.json + joints.png
bench-joints: peers warm
	$(BIN)/python benchmarks/joints.py

# sweeps on Dask (issue 20): engine choice (Dask vs Ray when installed), per-run overhead, 1 and 2
# workers, 64-worker estimate of the example sweeps: benchmarks/results/<machine>/sweep.md (~2 min)
bench-sweep: warm
	$(BIN)/python benchmarks/sweep.py

lint: venv
	$(BIN)/ruff check src tests benchmarks examples tools

clean:
	rm -rf $(VENV) .numba_cache demo .pytest_cache $(VIEWER_WEB)/node_modules
