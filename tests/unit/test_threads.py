"""Thread policy (issue 19): passive waiting of the OpenMP threads, tb.set_num_threads."""

import os
import subprocess
import sys

import pytest

import tumble as tb


def _env_after_import(env):
    code = "import tumble, os; print(os.environ.get('OMP_WAIT_POLICY'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return out.stdout.strip()


def test_importing_tumble_sets_a_passive_wait_unless_the_user_chose():
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert _env_after_import(env) == "PASSIVE"
    assert _env_after_import({**env, "OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"


def test_set_num_threads():
    before = tb.get_num_threads()
    try:
        tb.set_num_threads(1)
        assert tb.get_num_threads() == 1
    finally:
        tb.set_num_threads(before)
    for bad in (0, -1, 10**6, 1.5, "2", True):
        with pytest.raises(tb.SettingsError, match="set_num_threads"):
            tb.set_num_threads(bad)
    assert tb.get_num_threads() == before
