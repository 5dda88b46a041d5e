"""One quiet HiGHS instance factory for tumble's LPs (``tb.stability``, ``tb.gauss2d``).

highspy prints its banner ("Running HiGHS ...") on the process's C-level standard output when the
first ``Highs`` object is made, before any option can switch output off; that would corrupt the
output of ``tumble run --json`` and of any program printing JSON. ``quiet_highs`` makes the object
with file descriptor 1 pointed at /dev/null, then sets ``output_flag`` off.
"""

from __future__ import annotations

import os
import sys


def quiet_highs():
    """A ``highspy.Highs`` with all output off (threads 1: deterministic and no thread start-up)."""
    import highspy

    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            h = highspy.Highs()
    finally:
        os.dup2(saved, 1)
        os.close(saved)
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    return h
