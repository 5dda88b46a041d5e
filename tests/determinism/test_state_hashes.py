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
