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

# Derandomized is not enough: Hypothesis (6.170) also draws, with probability 0.05 per choice, "local
# constants" collected from every project module in sys.modules at the time, and which modules a pytest-xdist
# worker has imported depends on the files it ran before. The suite's draws then differed between a solo run
# and `make test`: a capsule drop the CI run of 2846a04 drew (test_shock_energy.py, CAPSULE_SPIN_CASE) was
# never drawn by the same test run alone. In the "ci" profile the local constants are left out (Hypothesis'
# global constants stay), so a test's draws depend on its own code only.
if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci":
    from hypothesis.internal.conjecture import providers as _hypothesis_providers  # noqa: E402

    if hasattr(_hypothesis_providers, "_get_local_constants"):
        _NO_LOCAL_CONSTANTS = _hypothesis_providers.Constants()
        _hypothesis_providers._get_local_constants = lambda: _NO_LOCAL_CONSTANTS
