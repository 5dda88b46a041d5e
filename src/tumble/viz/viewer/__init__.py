"""The browser viewer: ``tumble view run.npz`` serves a recording to a three.js page (``server``)."""

from tumble.viz.viewer.server import INSTALL_COMMAND, ViewerAssetsError, ViewerServer, serve, view

__all__ = ["serve", "view", "ViewerServer", "ViewerAssetsError", "INSTALL_COMMAND"]
