"""Kernels compiled in the running process and the same kernels loaded from the Numba cache give the
same results, bit for bit (issue 17's determinism defect: with fastmath contraction allowed they did
not; config.py's docstring has the measurement).

A fresh process with an empty cache compiles the kernels of two worlds and steps them; this process
(whose kernels ``make warm`` put in the cache) steps the same worlds; the state hashes must agree. The
impulse solver's box on a slope is the case that found the defect (its four bottom corners tie within
1e-18 m, so any difference in rounding reorders its contacts); stack3 under pgs covers the row solver.
About two minutes of compiling.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

WORLDS = """
import json, sys
sys.path.insert(0, {root!r})
import tumble.scenes as s
from tests.physics.test_impulse_solver import _box_on_slope, HP_DT
def worlds():
    w, b, th = _box_on_slope(30.0, 0.2)
    for _ in range(100):
        w.step(HP_DT)
    yield "impulse_slope", w.state_hash()
    w = s.build("stack3_nocache", solver="pgs")
    for _ in range(60):
        w.step(1 / 60)
    yield "stack3_nocache/pgs", w.state_hash()
"""


def _worlds():
    namespace = {}
    exec(WORLDS.format(root=str(ROOT)), namespace)
    return dict(namespace["worlds"]())


@pytest.mark.slow
def test_freshly_compiled_kernels_agree_with_cached_ones(tmp_path):
    code = WORLDS.format(root=str(ROOT)) + "print(json.dumps(dict(worlds())))\n"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "empty_cache"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT,
                         check=True)
    cold = json.loads(out.stdout.strip().splitlines()[-1])
    assert _worlds() == cold
