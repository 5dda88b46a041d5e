"""Shared test set-up: the Numba cache lives in the ignored .numba_cache folder."""

import os
from pathlib import Path

os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".numba_cache"))
