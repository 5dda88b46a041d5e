"""Paper 002 (Gauss' principle of least constraint for brick towers), planar reproduction: oracles.

Every expected value is a closed form or an independent computation (textbook inelastic collision,
momentum, the (L'') identity, the critical shift of a harmonic stack, a rigid-body Gauss QP with 3
unknowns per brick solved by SLSQP), never a number copied from this code's own output.
"""

import numpy as np
import pytest
from scipy.optimize import nnls

from tumble import gauss2d as g
from tumble.gauss2d.scenes import critical_shift
from tumble.gauss2d.step import mirror_error

G = 9.81


def _velocities(traj, dt):
    return np.diff(traj.positions, axis=0) / dt


# ---- §7, Thm. 7.1, Fig. 9: totally inelastic collisions without special handling -----------------

@pytest.mark.parametrize("m_a,m_b,v_a,v_b", [(1.0, 3.0, 2.0, 0.0), (2.0, 2.0, 1.5, -0.5)])
def test_two_body_collision_is_perfectly_inelastic(m_a, m_b, v_a, v_b):
    """Two free bodies (no gravity) collide head on: afterwards both move with the textbook common
    velocity (m_a v_a + m_b v_b) / (m_a + m_b), and the momentum is the same at every step."""
    s = g.build_bricks([[0.0, 0.0], [1.3, 0.0]], mass=[m_a, m_b])
    v0 = np.zeros_like(s.positions)
    v0[:4, 0], v0[4:, 0] = v_a, v_b
    dt = 1e-2
    traj = g.simulate(s, 80, g.GaussSettings(gravity=0.0, dt=dt), initial_velocity=v0)
    vel = _velocities(traj, dt)
    v_common = (m_a * v_a + m_b * v_b) / (m_a + m_b)
    np.testing.assert_allclose(vel[-1, :, 0], v_common, atol=1e-9)
    np.testing.assert_allclose(vel[-1, :, 1], 0.0, atol=1e-12)
    momentum = np.einsum("n,snx->sx", s.masses, vel)
    np.testing.assert_allclose(momentum, np.broadcast_to([m_a * v_a + m_b * v_b, 0.0], momentum.shape), atol=1e-9)
    # the collision happened (the two bodies were apart and approaching)
    assert abs(vel[0, 0, 0] - vel[0, 4, 0]) > 1.0


def test_three_body_chain_collision_sticks_together():
    """Three bodies in a row, the first moving: after the (multiple) collision all share the velocity
    total momentum / total mass (Thm. 7.1's Q* for touching bodies)."""
    s = g.build_bricks([[0.0, 0.0], [1.2, 0.0], [2.2, 0.0]], mass=[1.0, 2.0, 1.0])
    v0 = np.zeros_like(s.positions)
    v0[:4, 0] = 4.0
    dt = 1e-2
    traj = g.simulate(s, 40, g.GaussSettings(gravity=0.0, dt=dt), initial_velocity=v0)
    vel = _velocities(traj, dt)
    np.testing.assert_allclose(vel[-1, :, 0], 4.0 / 4.0, atol=1e-9)


# ---- §8.3 (L''): lengths ------------------------------------------------------------------------------

def test_length_rule_L2prime_holds_every_step_and_lengths_follow_the_closed_form():
    """(L''): the projection of every new bar on its previous direction equals the original length L0, to
    1e-9 at every step. Then the true length is exactly L0 / cos(phi) (phi the bar's rotation in the step),
    so the length error is second order in the rotation and does not accumulate."""
    s = g.overhang(4, 2.0 * critical_shift())  # the top brick tips over
    traj = g.simulate(s, 150, g.GaussSettings())
    e = traj.positions[:, s.bars[:, 0]] - traj.positions[:, s.bars[:, 1]]
    length = np.linalg.norm(e, axis=2)
    unit_prev = e[:-1] / length[:-1, :, None]
    projection = np.einsum("sbx,sbx->sb", e[1:], unit_prev)
    assert np.abs(projection - s.rest_lengths).max() < 1e-9
    cos_phi = projection / length[1:]
    np.testing.assert_allclose(length[1:], s.rest_lengths / cos_phi, rtol=0, atol=1e-9)
    # the top brick did rotate: lengths are not trivially constant
    assert np.abs(length - s.rest_lengths).max() > 1e-9


# ---- §1: stability LP against the closed-form critical overhang ---------------------------------------

@pytest.mark.parametrize("n", [2, 5, 8])
def test_lp_matches_closed_form_critical_shift(n):
    crit = critical_shift()
    assert g.stability(g.overhang(n, crit * (1 - 1e-3))).stable
    assert not g.stability(g.overhang(n, crit * (1 + 1e-3))).stable


def test_lp_forces_balance_the_weight():
    report = g.stability(g.overhang(5, 0.0))
    # frictionless, all contacts horizontal: the normal forces on the table carry the total weight
    on_table = report.contacts.edge_body == 5
    on_table |= report.contacts.vertex_body == 5
    assert report.forces[on_table].sum() == pytest.approx(5 * G, rel=1e-9)
    assert np.all(report.forces >= -1e-12)


@pytest.mark.parametrize("solver", ["clarabel", "osqp"])
def test_simulation_agrees_with_lp(solver):
    """A stack the LP calls stable (shift = half the critical one) stays put (1e-6 m over 150 steps);
    the same stack shifted three times the critical overhang visibly falls (its top brick drops more
    than 1 cm in 0.3 s)."""
    crit = critical_shift()
    settings = g.GaussSettings(qp=g.QPSettings(solver=solver))
    stable = g.overhang(5, 0.5 * crit)
    assert g.stability(stable).stable
    traj = g.simulate(stable, 150, settings)
    assert np.abs(traj.positions - traj.positions[0]).max() < 1e-6
    unstable = g.overhang(5, 3.0 * crit)
    report = g.stability(unstable)
    assert not report.stable
    assert report.moving[0] and not report.moving[2:].any()  # only the top two bricks take part
    traj = g.simulate(unstable, 150, settings)
    drop = unstable.body_centres(traj.positions[0])[0, 1] - unstable.body_centres(traj.positions[-1])[0, 1]
    assert drop > 0.01


# ---- §1, §3: initial collapse of the 5 x 5 tower (Fig. 2) ------------------------------------------------

def _rigid_body_gauss(system, report, inertia_factor):
    """Independent oracle: Gauss' principle with 3 unknowns per brick z = (a_x, a_y, angular acc.), the
    rigid-body form of §8.2: minimise sum m |a - g|^2 + I alpha^2 subject to the contact rows
    n . (a_vertex_point - a_edge_point) >= 0, point accelerations a + alpha z x r (at rest). Solved as a
    least-distance problem by Lawson and Hanson's NNLS (scipy.optimize.nnls), not by this package."""
    nb = system.n_bodies
    m = system.body_mass
    w, h = system.body_size[:, 0], system.body_size[:, 1]
    inertia = inertia_factor * m * (w * w + h * h)
    centres = system.body_centres(system.positions)
    tr, pts = report.contacts, report.contact_points
    C = np.zeros((len(tr), 3 * nb))  # contact rows over z
    for t in range(len(tr)):
        for body, sign in ((tr.vertex_body[t], 1.0), (tr.edge_body[t], -1.0)):
            if body >= nb:
                continue
            r = pts[t] - centres[body]
            n = sign * tr.normal[t]
            C[t, 3 * body:3 * body + 3] = [n[0], n[1], -r[1] * n[0] + r[0] * n[1]]
    weight = np.stack([m, m, inertia], axis=1).ravel()
    z0 = np.tile([0.0, -G, 0.0], nb)
    # u = W^(1/2) (z - z0): minimise |u| subject to G u >= h with G = C W^(-1/2), h = -C z0
    Gm = C / np.sqrt(weight)
    hv = -C @ z0
    E = np.vstack([Gm.T, hv[None, :]])
    f = np.zeros(E.shape[0])
    f[-1] = 1.0
    lam, _ = nnls(E, f, maxiter=50 * E.shape[1])
    r = E @ lam - f
    assert abs(r[-1]) > 1e-12  # feasible
    u = -r[:-1] / r[-1]
    z = (z0 + u / np.sqrt(weight)).reshape(nb, 3)
    assert np.all(C @ z.ravel() > -1e-9)
    return z[:, :2], z[:, 2]


@pytest.mark.parametrize("layout,inertia_factor", [("corners4", 1 / 4), ("nine", 1 / 12)])
def test_bricks5x5_initial_motion(layout, inertia_factor):
    """The 5 x 5 tower (Fig. 2) is unstable. Its initial motion (the first QP, an exact description of
    the infinitesimal collapse): the two bottom layers and the three inner columns stay at rest; in each
    of the three upper layers the outermost brick tips outwards (left ones counter-clockwise, right ones
    clockwise), mirror-symmetrically, with no horizontal acceleration of any centre of mass (frictionless
    contacts with horizontal faces push only vertically). The accelerations agree with an independent
    rigid-body Gauss QP (3 unknowns per brick; I = m (w^2 + h^2) / 4 for corner masses, / 12 for the
    nine-point brick)."""
    s = g.bricks5x5(layout=layout)
    report = g.stability(s)
    assert not report.stable
    layer, column = np.divmod(np.arange(25), 5)
    outer_top = (layer >= 2) & ((column == 0) | (column == 4))
    np.testing.assert_array_equal(report.moving, outer_top)
    np.testing.assert_allclose(report.acceleration[:, 0], 0.0, atol=1e-9)
    assert np.all(report.angular_acceleration[outer_top & (column == 0)] > 0)
    assert np.all(report.angular_acceleration[outer_top & (column == 4)] < 0)
    mirror = (layer * 5 + 4 - column)
    np.testing.assert_allclose(report.acceleration[mirror] * [-1, 1], report.acceleration, atol=1e-9)
    np.testing.assert_allclose(report.angular_acceleration[mirror], -report.angular_acceleration, atol=1e-9)
    a_ref, alpha_ref = _rigid_body_gauss(s, report, inertia_factor)
    np.testing.assert_allclose(report.acceleration, a_ref, atol=1e-9)
    np.testing.assert_allclose(report.angular_acceleration, alpha_ref, atol=1e-9)


def test_first_steps_of_position_and_acceleration_loops_agree():
    """Thm. 5.1: from rest (so (L1) holds) with the contacts determined exactly, the acceleration loop of
    Fig. 6 and the position loop of Fig. 7 give the same positions."""
    s = g.overhang(5, 1.5 * critical_shift())
    pos = g.simulate(s, 1, g.GaussSettings(method="position")).positions[-1]
    acc = g.simulate(s, 1, g.GaussSettings(method="acceleration")).positions[-1]
    np.testing.assert_allclose(pos, acc, atol=1e-12)
    assert np.abs(pos - s.positions).max() > 1e-6


# ---- Fig. 11 footnote: mirror symmetry -----------------------------------------------------------------

def test_bricks5x5_stays_mirror_symmetric():
    """The symmetric tower stays mirror symmetric to 1e-9 over its whole 1000-step run with OSQP at
    tol 1e-10 plus the active-set polish (the paper's CPLEX barrier run lost its symmetry, Fig. 11)."""
    s = g.bricks5x5()
    traj = g.simulate(s, 1000, g.GaussSettings(qp=g.QPSettings(solver="osqp", tol=1e-10, polish=True)))
    assert traj.mirror_error.max() < 1e-9
    assert mirror_error(s, traj.positions[-1]) < 1e-9
    # the tower did collapse (the top outer bricks fell by more than a brick height)
    drop = s.body_centres(traj.positions[0])[20, 1] - s.body_centres(traj.positions[-1])[20, 1]
    assert drop > 0.5


@pytest.mark.parametrize("layout,inertia_factor", [("corners4", 1 / 4), ("nine", 1 / 12)])
def test_initial_tipping_of_a_brick_over_a_table_edge_closed_form(layout, inertia_factor):
    """One brick whose centre lies d beyond a frictionless table edge pivots on the table corner. The
    pivot, at r = (-d, -h/2) from the centre, keeps a zero vertical acceleration: a_y + alpha r_x = 0;
    with m a_y = N - m g and I alpha = r_x N this gives alpha = m g r_x / (I + m r_x^2) and no
    horizontal acceleration (the only force is vertical)."""
    from tumble.gauss2d.scenes import table

    w, h, m, d = 1.0, 0.5, 2.0, 0.1
    s = g.build_bricks([[d, 0.5 * h]], width=w, height=h, mass=m, layout=layout, statics=[table()])
    report = g.stability(s)
    assert not report.stable
    inertia = inertia_factor * m * (w * w + h * h)
    r_x = -d
    alpha = m * G * r_x / (inertia + m * r_x * r_x)
    assert report.angular_acceleration[0] == pytest.approx(alpha, rel=1e-9)
    np.testing.assert_allclose(report.acceleration[0], [0.0, -alpha * r_x], atol=1e-9)
