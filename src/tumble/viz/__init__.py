"""Seeing a run: offline rendering (``render``: PNG frames and MP4), the browser viewer (``viewer``) and
plots of the per-step counters (``plots``). Everything reads a recording (``tumble.recording``) and is
imported lazily, so ``import tumble`` pulls in no graphics library."""
