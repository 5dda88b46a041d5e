"""Every library scene under every solver ends in the recorded state, bit for bit (issue 14's
regression net: the hashes were recorded on the code before the solver-plug-in redesign and must
not change with any refactor; a deliberate change of results re-records them with
``python tests/determinism/state_hashes.py --write`` and says why in its commit).

The exact comparison runs on the kind of machine the file was written on (``machine_signature``:
the bits of a result depend on the CPU the kernels are compiled for; see ``state_hashes.py``). On
another kind of machine each case instead runs twice in fresh worlds and compares the two, and the
thread-count test compares a one-thread run with a two-thread run of the same machine."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.determinism.state_hashes import machine_signature, recorded, run_case

RECORDED_ON, RECORDED = recorded()
HERE_SIGNATURE = machine_signature()
SAME_MACHINE = RECORDED_ON == HERE_SIGNATURE
OTHER_MACHINE = (f"state_hashes.json was recorded on '{RECORDED_ON}', this machine is '{HERE_SIGNATURE}': "
                 "bit-for-bit results hold per kind of machine (re-record with state_hashes.py --write "
                 "from a reviewed run to compare here)")


@pytest.mark.parametrize("case", sorted(RECORDED))
def test_state_hash_unchanged(case):
    """On the recording machine: the recorded hash. On another kind of machine (``OTHER_MACHINE``) the file
    says nothing about the bits, so the case checks what holds everywhere: a second fresh world of the same
    scene ends in the same bits as the first (no state carried between worlds, no race)."""
    name, solver = case.split("/")
    got = run_case(name, solver)
    if SAME_MACHINE:
        assert got == RECORDED[case]
    else:
        assert got.split()[0] == RECORDED[case].split()[0]     # the body count (or 'unsupported')
        assert run_case(name, solver) == got, OTHER_MACHINE


def _hashes_with_threads(threads: int) -> dict[str, str]:
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, str(Path(__file__).with_name("state_hashes.py"))], env=env, cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out[out.index("{"):])


def test_state_hashes_on_one_thread():
    """The same hashes with Numba on one thread (the parallel stages and their serial twins agree
    bit for bit): every case recomputed in a subprocess with NUMBA_NUM_THREADS=1, against the file
    on the machine that recorded it, else against a two-thread run on this machine."""
    got = _hashes_with_threads(1)
    expected = RECORDED if SAME_MACHINE else _hashes_with_threads(2)
    assert sorted(got) == sorted(RECORDED)
    assert got == expected


def test_machine_signature_names_the_cpu_and_versions():
    """The signature changes with what changes the bits: the CPU name, the libc and the versions."""
    import numba
    import numpy as np

    assert f"numpy {np.__version__}" in HERE_SIGNATURE
    assert f"numba {numba.__version__}" in HERE_SIGNATURE
    assert "features:" in HERE_SIGNATURE
