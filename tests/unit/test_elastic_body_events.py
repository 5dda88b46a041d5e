"""Body-body event detection (tumble.elastic.body_contact.body_crossings) against closed forms: a vertex moving
at constant velocity through a still triangle, and an edge sweeping across another edge. With linear motion
g(t) is linear for vertex-face against a still face (and for edge-edge with one edge still), so the Hermite
cubic is exact and the crossing is at u = g0 / (g0 - g1), found to the bisection tolerance from the left."""

import numpy as np

from tumble.elastic.body_contact import BARYCENTRIC_SLACK, body_crossings, surface_edges

U_TOL = 1e-9


def _run(x0, v, h, triangles, pairs, tie_u=1e-6):
    x1 = x0 + h * v
    edges, tri_edges = surface_edges(triangles)
    m = 15 * len(pairs)
    events = (np.empty(m, dtype=np.int64), np.empty((m, 4), dtype=np.int64), np.empty((m, 4)), np.empty(m))
    first, count = body_crossings(pairs, triangles, tri_edges, edges, x0, v, x1, v, h,
                                  np.zeros(len(x0), dtype=np.bool_), np.zeros(len(edges), dtype=np.bool_), U_TOL,
                                  tie_u, BARYCENTRIC_SLACK, *events)
    return first, count, events, edges


def test_vertex_through_a_still_triangle_is_found_at_the_closed_form_time():
    # triangle 0 in z = 0 (outward +z: counter-clockwise seen from above); triangle 1 a small one whose corner 3
    # starts 0.3 m above, falling at 2 m/s: it meets z = 0 at t = 0.15 s of the 0.2 s step, u = 0.75
    x0 = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.2, 0.2, 0.3], [0.3, 0.2, 0.5], [0.2, 0.3, 0.5]], float)
    v = np.zeros_like(x0)
    v[3:] = (0.0, 0.0, -2.0)
    triangles = np.array([[0, 1, 2], [3, 5, 4]])
    first, count, _, _ = _run(x0, v, 0.2, triangles, np.array([[0, 1]]))
    assert 0.75 - 2 * U_TOL <= first <= 0.75
    assert count == 0  # not at the step's start: the step is cut, nothing tied yet
    # the same vertex beside the triangle (projection outside it): no event
    x0[3:, 0] += 2.0
    first, _, _, _ = _run(x0, v, 0.2, triangles, np.array([[0, 1]]))
    assert first == 2.0


def test_a_crossing_at_the_step_start_is_written_with_its_spring_weights():
    x0 = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0.2, 0.3, 1e-12], [0.3, 0.2, 0.5], [0.2, 0.3, 0.5]], float)
    v = np.zeros_like(x0)
    v[3:] = (0.0, 0.0, -1.0)
    triangles = np.array([[0, 1, 2], [3, 5, 4]])
    first, count, (kind, index, weight, sign), _ = _run(x0, v, 0.01, triangles, np.array([[0, 1]]), tie_u=1e-3)
    assert first <= 1e-3 and count >= 1
    vf = np.flatnonzero(kind[:count] == 0)
    assert len(vf) == 1 and index[vf[0], 0] == 3 and sorted(index[vf[0], 1:]) == [0, 1, 2]
    w = weight[vf[0]]
    assert abs(w.sum()) < 1e-12 and w[0] == 1.0
    # the anchor sum_k -w_k x_k (k = 1..3) is the vertex's projection (0.2, 0.3, 0)
    anchor = -(w[1:, None] * x0[index[vf[0], 1:]]).sum(0)
    assert np.allclose(anchor, (0.2, 0.3, 0.0), atol=1e-9)
    assert sign[vf[0]] == 1.0


def test_edge_sweeping_across_an_edge_is_found_at_the_closed_form_time():
    # edge (0, 1) of triangle 0 lies on the x axis; triangle 1's edge (3, 4) runs along y at x = 0.5, z = 0.4,
    # falling at 4 m/s: the edges meet at t = 0.1 s of the 0.125 s step, u = 0.8, at s = t = 1/2
    x0 = np.array([[0, 0, 0], [1, 0, 0], [0.5, -1, -1], [0.5, -0.5, 0.4], [0.5, 0.5, 0.4], [0.5, 0, 2]], float)
    v = np.zeros_like(x0)
    v[3:] = (0.0, 0.0, -4.0)
    triangles = np.array([[0, 1, 2], [3, 4, 5]])
    first, _, _, _ = _run(x0, v, 0.125, triangles, np.array([[0, 1]]))
    assert 0.8 - 2 * U_TOL <= first <= 0.8
