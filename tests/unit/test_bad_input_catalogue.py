"""Every case of the bad-input catalogue (tests/bad_input_catalogue.py) gets a TumbleError with a
message and changes nothing; docs/bad_input.md is the catalogue's current output."""

import pytest

import tumble as tb
from tests.bad_input_catalogue import CASES, DOC, fingerprint, run_case, table


@pytest.mark.parametrize("area, code", CASES, ids=[f"{a}:{c[:60]}" for a, c in CASES])
def test_case_is_rejected_with_a_tumble_error_and_changes_nothing(area, code):
    e, w, before = run_case(code)
    assert isinstance(e, tb.TumbleError), f"{code} raised {type(e).__name__}: {e}"
    assert len(str(e)) > 10
    assert fingerprint(w) == before, f"{code}: the rejected call changed the world"


def test_the_catalogue_in_the_docs_is_current():
    assert DOC.read_text() == table(), "docs/bad_input.md is stale: run python tests/bad_input_catalogue.py"
