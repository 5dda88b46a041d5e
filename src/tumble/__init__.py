"""tumble."""
