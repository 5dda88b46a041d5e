"""Contact manifolds for pairs with a sphere: sphere-sphere, plane-sphere, sphere-box.

Every pair function has the narrow-phase signature

    collide_<a>_<b>(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features) -> count

with type_a <= type_b (types.GEOM_*). The normal points from A to B, each point is the midpoint of
the two surface points, the depth is the overlap along the normal (negative = gap, reported down to
-margin) and the feature id is the constant 0: a sphere pair has a single contact that never changes
identity (Catto 001 §8.2 only needs ids where a manifold has several points).
"""

from __future__ import annotations

import math

from tumble._core.config import kernel

#: Below this centre distance [m] the direction between two centres is undefined; use world +z.
_TINY = 1e-12


@kernel(inline="always")
def _write_single(normal, points, depths, features, nx, ny, nz, px, py, pz, depth):
    """Store a one-point manifold (feature id 0)."""
    normal[0] = nx
    normal[1] = ny
    normal[2] = nz
    points[0, 0] = px
    points[0, 1] = py
    points[0, 2] = pz
    depths[0] = depth
    features[0] = 0


@kernel
def collide_sphere_sphere(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features):
    """Two spheres: separation s = |pb - pa| - ra - rb along n = (pb - pa) / |pb - pa|.

    Surface points pa + ra n and pb - rb n; their midpoint is pa + n (ra + |d| - rb) / 2.
    """
    ra = sa[0]
    rb = sb[0]
    dx = pb[0] - pa[0]
    dy = pb[1] - pa[1]
    dz = pb[2] - pa[2]
    dist = math.sqrt(dx * dx + dy * dy + dz * dz)
    sep = dist - ra - rb
    if sep > margin:
        return 0
    if dist > _TINY:
        nx = dx / dist
        ny = dy / dist
        nz = dz / dist
    else:
        nx = 0.0
        ny = 0.0
        nz = 1.0
    t = 0.5 * (ra + dist - rb)
    _write_single(normal, points, depths, features, nx, ny, nz,
                  pa[0] + t * nx, pa[1] + t * ny, pa[2] + t * nz, -sep)
    return 1


@kernel
def collide_plane_sphere(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features):
    """Half-space {x : n.(x - pa) <= 0}, n = Ra[:, 2], against a sphere (centre pb, radius rb).

    Separation s = n.(pb - pa) - rb. The sphere's lowest point is q = pb - rb n and its projection
    on the plane is q - s n, so the midpoint is q - (s / 2) n.
    """
    rb = sb[0]
    nx = Ra[0, 2]
    ny = Ra[1, 2]
    nz = Ra[2, 2]
    sep = nx * (pb[0] - pa[0]) + ny * (pb[1] - pa[1]) + nz * (pb[2] - pa[2]) - rb
    if sep > margin:
        return 0
    t = rb + 0.5 * sep
    _write_single(normal, points, depths, features, nx, ny, nz,
                  pb[0] - t * nx, pb[1] - t * ny, pb[2] - t * nz, -sep)
    return 1


@kernel
def collide_sphere_box(pa, Ra, sa, pb, Rb, sb, margin, normal, points, depths, features):
    """Sphere (A, centre pa, radius ra) against a box (B).

    In box coordinates the centre is l = Rb^T (pa - pb).
    * Outside the box: the closest box point is q = clamp(l, -h, h); n = (q - l) / |q - l| (sphere
      towards box), separation |q - l| - ra.
    * Inside (or on) the box: the nearest face is the axis i with the least h_i - |l_i|; the sphere
      must leave through it, so the box lies at n = -sign(l_i) e_i from the sphere and the depth is
      ra + h_i - |l_i|.
    The sphere surface point is pa + ra n, the box point q; the contact point is their midpoint.
    """
    ra = sa[0]
    rx = pa[0] - pb[0]
    ry = pa[1] - pb[1]
    rz = pa[2] - pb[2]
    # Local coordinates and closest point of the box (all in box frame).
    l0 = Rb[0, 0] * rx + Rb[1, 0] * ry + Rb[2, 0] * rz
    l1 = Rb[0, 1] * rx + Rb[1, 1] * ry + Rb[2, 1] * rz
    l2 = Rb[0, 2] * rx + Rb[1, 2] * ry + Rb[2, 2] * rz
    q0 = min(max(l0, -sb[0]), sb[0])
    q1 = min(max(l1, -sb[1]), sb[1])
    q2 = min(max(l2, -sb[2]), sb[2])
    e0 = q0 - l0
    e1 = q1 - l1
    e2 = q2 - l2
    dist = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
    if dist > _TINY:
        sep = dist - ra
        if sep > margin:
            return 0
        m0 = e0 / dist
        m1 = e1 / dist
        m2 = e2 / dist
        depth = -sep
    else:
        # Centre inside: push out through the face of least penetration h_i - |l_i|.
        g0 = sb[0] - abs(l0)
        g1 = sb[1] - abs(l1)
        g2 = sb[2] - abs(l2)
        m0 = 0.0
        m1 = 0.0
        m2 = 0.0
        if g0 <= g1 and g0 <= g2:
            m0 = -1.0 if l0 >= 0.0 else 1.0
            q0 = -m0 * sb[0]
            gap = g0
        elif g1 <= g2:
            m1 = -1.0 if l1 >= 0.0 else 1.0
            q1 = -m1 * sb[1]
            gap = g1
        else:
            m2 = -1.0 if l2 >= 0.0 else 1.0
            q2 = -m2 * sb[2]
            gap = g2
        depth = ra + gap
    # Back to world: normal n = Rb m, box point pb + Rb q, sphere point pa + ra n.
    nx = Rb[0, 0] * m0 + Rb[0, 1] * m1 + Rb[0, 2] * m2
    ny = Rb[1, 0] * m0 + Rb[1, 1] * m1 + Rb[1, 2] * m2
    nz = Rb[2, 0] * m0 + Rb[2, 1] * m1 + Rb[2, 2] * m2
    bx = pb[0] + Rb[0, 0] * q0 + Rb[0, 1] * q1 + Rb[0, 2] * q2
    by = pb[1] + Rb[1, 0] * q0 + Rb[1, 1] * q1 + Rb[1, 2] * q2
    bz = pb[2] + Rb[2, 0] * q0 + Rb[2, 1] * q1 + Rb[2, 2] * q2
    _write_single(normal, points, depths, features, nx, ny, nz,
                  0.5 * (pa[0] + ra * nx + bx), 0.5 * (pa[1] + ra * ny + by), 0.5 * (pa[2] + ra * nz + bz),
                  depth)
    return 1
