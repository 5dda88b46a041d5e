"""Event detection by Hermite interpolation and Bernstein-Bezier range bisection (paper 003 §6.2).

A condition g(t) > 0 that depends on the positions only (here: vertex above a plane) is interpolated over
a step [t_a, t_b] by the cubic Hermite polynomial matching g and g' at both ends (eq. 19), written in the
Bernstein basis (eq. 20-21): P1 = g(t_a), P2 = g(t_a) + dt/3 g'(t_a), P3 = g(t_b) - dt/3 g'(t_b), P4 = g(t_b).
g on the step is a convex combination of P1..P4: all positive -> no crossing. Otherwise halve with de
Casteljau's algorithm and test the halves, left half first, so the first crossing is found; the search
stops at a parameter width ``u_tolerance`` and reports the left end of that interval (never after the
crossing).
"""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel

#: depth limit of the bisection stack (2^-40 of a step is far below any useful time resolution)
_MAX_DEPTH = 40


@kernel(inline="always")
def first_crossing(p1, p2, p3, p4, u_tolerance, stack):
    """First u in [0, 1] where the cubic with Bernstein coefficients p1..p4 reaches <= 0, or 2.0 if it
    stays > 0 on [0, 1]. An explicit stack (scratch of shape (2 * _MAX_DEPTH + 2, 6), allocated by the
    caller once) replaces recursion."""
    if p1 <= 0.0:
        return 0.0
    if p1 > 0.0 and p2 > 0.0 and p3 > 0.0 and p4 > 0.0:
        return 2.0
    stack[0, 0] = p1
    stack[0, 1] = p2
    stack[0, 2] = p3
    stack[0, 3] = p4
    stack[0, 4] = 0.0
    stack[0, 5] = 1.0
    top = 1
    while top > 0:
        top -= 1
        a = stack[top, 0]
        b = stack[top, 1]
        c = stack[top, 2]
        d = stack[top, 3]
        u0 = stack[top, 4]
        u1 = stack[top, 5]
        if a <= 0.0:
            return u0
        if a > 0.0 and b > 0.0 and c > 0.0 and d > 0.0:
            continue
        if u1 - u0 <= u_tolerance or top >= 2 * _MAX_DEPTH:
            return u0
        # de Casteljau at 1/2
        ab = 0.5 * (a + b)
        bc = 0.5 * (b + c)
        cd = 0.5 * (c + d)
        abc = 0.5 * (ab + bc)
        bcd = 0.5 * (bc + cd)
        mid = 0.5 * (abc + bcd)
        um = 0.5 * (u0 + u1)
        # push the right half first so that the left half is examined first
        stack[top, 0] = mid
        stack[top, 1] = bcd
        stack[top, 2] = cd
        stack[top, 3] = d
        stack[top, 4] = um
        stack[top, 5] = u1
        top += 1
        stack[top, 0] = a
        stack[top, 1] = ab
        stack[top, 2] = abc
        stack[top, 3] = mid
        stack[top, 4] = u0
        stack[top, 5] = um
        top += 1
    return 2.0


@kernel
def plane_crossings(positions_a, velocities_a, positions_b, velocities_b, dt, plane_normal, plane_offset, skip,
                    u_tolerance, crossing_u):
    """For every vertex not in ``skip`` (bool, n), write into ``crossing_u`` (n,) the first step fraction at
    which g = n . x - offset reaches 0 (2.0 if it stays > 0), from the Hermite cubic of g over the step
    (g' = n . v). Return the smallest fraction."""
    first = 2.0
    stack = np.empty((2 * _MAX_DEPTH + 2, 6))
    for i in range(positions_a.shape[0]):
        crossing_u[i] = 2.0
        if skip[i]:
            continue
        ga = -plane_offset
        gb = -plane_offset
        dga = 0.0
        dgb = 0.0
        for c in range(3):
            ga += plane_normal[c] * positions_a[i, c]
            gb += plane_normal[c] * positions_b[i, c]
            dga += plane_normal[c] * velocities_a[i, c]
            dgb += plane_normal[c] * velocities_b[i, c]
        if ga > 0.0 and gb > 0.0 and ga + dt / 3.0 * dga > 0.0 and gb - dt / 3.0 * dgb > 0.0:
            continue
        # only vertices whose Bernstein coefficients are not all positive get here (those near the floor), so
        # the call with an array argument (kernel rule 2) costs nothing on the bulk of the vertices
        u = first_crossing(ga, ga + dt / 3.0 * dga, gb - dt / 3.0 * dgb, gb, u_tolerance, stack)
        crossing_u[i] = u
        if u < first:
            first = u
    return first


@kernel
def trajectory_boxes(positions_a, velocities_a, positions_b, velocities_b, dt, boxes):
    """Axis-aligned box of every vertex's path over the step (§6.3): per axis, the Hermite cubic of the
    coordinate (eq. 19-21) lies in the convex hull of its Bernstein coefficients, so [min P, max P] bounds
    it. ``boxes`` (n, 6): min x, y, z then max x, y, z, m. The first step of body-body collision detection
    (vertex-face and edge-edge pairs whose boxes overlap); the pair tests themselves are later work."""
    third = dt / 3.0
    for i in range(positions_a.shape[0]):
        for c in range(3):
            p1 = positions_a[i, c]
            p2 = p1 + third * velocities_a[i, c]
            p4 = positions_b[i, c]
            p3 = p4 - third * velocities_b[i, c]
            boxes[i, c] = min(min(p1, p2), min(p3, p4))
            boxes[i, 3 + c] = max(max(p1, p2), max(p3, p4))


@kernel
def triangle_boxes(triangles, vertex_boxes, boxes):
    """Box of every surface triangle's sweep over the step: the union of its vertices' path boxes (§6.3)."""
    for t in range(triangles.shape[0]):
        a = triangles[t, 0]
        b = triangles[t, 1]
        d = triangles[t, 2]
        for c in range(3):
            boxes[t, c] = min(vertex_boxes[a, c], min(vertex_boxes[b, c], vertex_boxes[d, c]))
            boxes[t, 3 + c] = max(vertex_boxes[a, 3 + c], max(vertex_boxes[b, 3 + c], vertex_boxes[d, 3 + c]))
