"""Shared test set-up: the Numba cache lives in the ignored .numba_cache folder."""

import os
from pathlib import Path

os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".numba_cache"))

# Hypothesis (tests/physics/test_fuzz.py and others): the suite draws the same examples on every run
# ("ci", derandomized), so a green `make test` is reproducible and a red one is a regression, not a new
# draw. `make fuzz` explores: HYPOTHESIS_PROFILE=explore draws fresh examples on every run (SEED=n repeats one);
# what it finds is shrunk into an @example or a named case of the test it broke.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("ci", derandomize=True)
_hypothesis_settings.register_profile("explore", derandomize=False)
_hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
