"""Every library scene under every solver ends in the recorded state, bit for bit (issue 14's
regression net: the hashes were recorded on the code before the solver-plug-in redesign and must
not change with any refactor; a deliberate change of results re-records them with
``python tests/determinism/state_hashes.py --write`` and says why in its commit)."""

import json

import pytest

from tests.determinism.state_hashes import FILE, run_case

RECORDED = json.loads(FILE.read_text())


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_state_hash_unchanged(case):
    name, solver = case.split("/")
    assert run_case(name, solver) == RECORDED[case]


def test_state_hashes_on_one_thread():
    """The same hashes with Numba on one thread (the parallel stages and their serial twins agree
    bit for bit): every case recomputed in a subprocess with NUMBA_NUM_THREADS=1."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(Path(__file__).with_name("state_hashes.py"))], env=env, cwd=root,
                         capture_output=True, text=True, check=True).stdout
    got = json.loads(out[out.index("{"):])
    assert got == RECORDED
