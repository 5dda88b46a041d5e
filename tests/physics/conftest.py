"""Every closed-form and resting test runs under each velocity-level solver."""

import pytest


@pytest.fixture(params=["pgs", "shock"])
def solver(request):
    return request.param
