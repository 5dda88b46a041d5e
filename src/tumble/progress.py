"""Progress bars for long runs, renders and benchmarks: tqdm on stderr with steps (or frames) per
second and the ETA, shown only when stderr is a terminal and the caller did not ask for silence
(``--json``), so logs, pipes and CI output stay clean."""

from __future__ import annotations

import sys


def bar(total: int, desc: str = "", *, unit: str = "step", enabled: bool = True):
    """A tqdm bar of ``total`` ``unit``s; a no-op bar (``update`` still works) when ``enabled`` is
    False or stderr is not a terminal."""
    from tqdm import tqdm

    show = bool(enabled) and sys.stderr.isatty()
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr, leave=False, mininterval=0.5,
                disable=not show, dynamic_ncols=True)
