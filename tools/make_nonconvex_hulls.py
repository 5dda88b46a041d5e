"""Write ``src/tumble/scenes/data/cow_hulls.npz``: the convex decomposition of the procedural cow
(``tumble.scenes.nonconvex.cow_mesh``) by CoACD 1.0.14 at ``COACD_THRESHOLD`` with ``COACD_SEED``.

    python tools/make_nonconvex_hulls.py            # write the file (20-60 s of CoACD on 2 cores)
    python tools/make_nonconvex_hulls.py --check    # decompose again and compare with the shipped file

The file holds ``points`` (every piece's vertices, the pieces' common centre of mass at the origin),
``counts`` (vertices per piece), ``offset`` (the shift from the mesh frame [m]) and, for the record,
``seconds`` (CoACD's run time), ``mesh_volume`` [m^3] and ``threshold``. ``--check`` exits 1 when the
fresh decomposition differs (piece count or any point by more than 1e-9 m).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from tumble.scenes import nonconvex as nc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare a fresh decomposition with the shipped file")
    args = ap.parse_args(argv)
    mesh = nc.cow_mesh()
    t0 = time.perf_counter()
    pieces = nc.decompose(mesh)
    seconds = time.perf_counter() - t0
    packed = nc.pack_hulls(pieces)
    print(f"cow mesh: {len(mesh.vertices)} vertices, {len(mesh.faces)} faces, volume {mesh.volume:.6f} m^3; "
          f"CoACD: {len(pieces)} hulls in {seconds:.1f} s, {packed['counts'].tolist()} vertices")
    if args.check:
        with np.load(nc.COW_HULLS) as f:
            same = (np.array_equal(f["counts"], packed["counts"])
                    and np.allclose(f["points"], packed["points"], rtol=0.0, atol=1e-9))
        print("matches the shipped file" if same else "DIFFERS from the shipped file")
        return 0 if same else 1
    nc.DATA.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(nc.COW_HULLS, **packed, seconds=seconds, mesh_volume=float(mesh.volume),
                        threshold=nc.COACD_THRESHOLD)
    print(f"wrote {nc.COW_HULLS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
