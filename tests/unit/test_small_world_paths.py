"""Issue 14's fixed-cost paths for small worlds against the calls they replace, bit for bit:

- ``contact.rows.prepare_contact_rows_small`` (contacts per body, the serial rows, cfm 0 and group 1
  in one kernel call) against ``count_body_contacts``, ``prepare_contact_rows.serial`` and the two
  slice assignments ``stages._contact_rows`` makes for a large world;
- the contact rows' J, B = M^-1 J^T, 1 / (J B) and warm-start impulses from scalars (no scratch arrays
  per point) against ``contact.rows.tangent_basis`` and ``fill_row`` on arrays, per point;
- ``pgs.kernels.block_sweep_with`` on work arrays left dirty by an earlier call (the substep loop and
  the block solves allocate them once) against ``block_sweep`` with fresh ones.
"""

from __future__ import annotations

import math

import numpy as np

import tumble as tb
from tumble._core.contact.rows import (
    count_body_contacts,
    fill_row,
    prepare_contact_rows,
    prepare_contact_rows_small,
    tangent_basis,
)
from tumble._core.solvers.pgs.kernels import block_scratch, block_sweep, block_sweep_with, manifold_starts_of
from tumble._core.types import FRICTION_COULOMB

ROW_FIELDS = ("row_body", "row_J", "row_B", "row_inv_diag", "row_bias", "row_bias_relax", "row_lo", "row_hi",
              "row_link", "row_mu", "row_kind", "row_lambda", "row_owner")


def _stack(steps=30):
    spec = tb.scenes.spec("stack10")
    w = spec.build(solver="pgs")
    for _ in range(steps):
        w.step(spec.dt)
    return spec, w._core


def _contact_args(core, dt):
    b, c, s = core.bodies, core.contacts, core.settings
    g = core.gravity
    return (c.count, c.contact_body_a, c.contact_body_b, c.contact_point, c.contact_normal, c.contact_depth,
            c.contact_friction, c.contact_restitution, c.contact_normal_impulse, c.contact_friction_impulse,
            b.body_position, b.body_linear_velocity, b.body_angular_velocity, b.body_inv_mass, b.body_mass,
            b.body_inv_inertia_world, b.body_fixed), (dt, s.baumgarte, s.slop, s.max_correction_speed,
                                                      s.restitution_threshold, FRICTION_COULOMB,
                                                      math.sqrt(float(g @ g)), s.warm_start)


def _rows(core, n):
    r = core.rows
    out = {f: np.full_like(getattr(r, f)[:n], 7) for f in ROW_FIELDS}
    out["row_cfm"] = np.full(n, 9.0)
    out["row_group"] = np.full(n, 9, dtype=r.row_group.dtype)
    return out


def test_fused_contact_rows_equal_the_calls_one_by_one():
    spec, core = _stack()
    b = core.bodies
    head, tail = _contact_args(core, spec.dt)
    n = 3 * core.contacts.count
    assert n > 0
    want, got = _rows(core, n), _rows(core, n)
    count_want = np.full(b.count, -1, dtype=b.body_contact_count.dtype)
    count_got = count_want.copy()

    count_body_contacts(core.contacts.contact_body_a, core.contacts.contact_body_b, core.contacts.count, count_want,
                        b.count)
    rows = prepare_contact_rows.serial(*head, count_want, *tail, 0, *(want[f] for f in ROW_FIELDS))
    want["row_cfm"][:rows] = 0.0
    want["row_group"][:rows] = 1

    rows_got = prepare_contact_rows_small(*head, count_got, b.count, *tail, *(got[f] for f in ROW_FIELDS),
                                          got["row_cfm"], got["row_group"])
    assert rows_got == rows == n
    np.testing.assert_array_equal(count_got, count_want)
    for f in want:
        np.testing.assert_array_equal(got[f], want[f], err_msg=f)


def test_contact_rows_from_scalars_equal_fill_row_on_arrays():
    spec, core = _stack()
    b, c = core.bodies, core.contacts
    head, tail = _contact_args(core, spec.dt)
    n = 3 * c.count
    got = _rows(core, n)
    prepare_contact_rows.serial(*head, b.body_contact_count.copy(), *tail, 0, *(got[f] for f in ROW_FIELDS))
    want = {f: np.full_like(got[f], 7) for f in ("row_body", "row_J", "row_B", "row_inv_diag")}
    lam = np.empty(n)
    for p in range(c.count):
        a, o = c.contact_body_a[p], c.contact_body_b[p]
        ia, ib = (-1 if b.body_fixed[a] else a), (-1 if b.body_fixed[o] else o)
        normal = c.contact_normal[p].copy()
        ra, rb = c.contact_point[p] - b.body_position[a], c.contact_point[p] - b.body_position[o]
        t1, t2 = np.empty(3), np.empty(3)
        tangent_basis(normal, t1, t2)
        for k, d in enumerate((normal, t1, t2)):
            fill_row(3 * p + k, ia, ib, d, ra, rb, b.body_inv_mass, b.body_inv_inertia_world, want["row_body"],
                     want["row_J"], want["row_B"], want["row_inv_diag"])
        f = c.contact_friction_impulse[p]
        lam[3 * p: 3 * p + 3] = (c.contact_normal_impulse[p], f[0] * t1[0] + f[1] * t1[1] + f[2] * t1[2],
                                  f[0] * t2[0] + f[1] * t2[1] + f[2] * t2[2])
    assert core.settings.warm_start and np.any(lam != 0.0)
    for f in want:
        np.testing.assert_array_equal(got[f], want[f], err_msg=f)
    np.testing.assert_array_equal(got["row_lambda"], lam)


def test_block_sweep_on_reused_work_arrays_is_bit_identical():
    spec, core = _stack()
    b, c, r, s = core.bodies, core.contacts, core.rows, core.settings
    n = r.count
    assert n == 3 * c.count > 0
    starts = manifold_starts_of(c.count, c.contact_key)
    m = starts.shape[0] - 1
    K, W, vec, ind = block_scratch()
    K[:] = np.nan            # dirty work arrays: every entry read must be written first
    W[:] = np.inf
    vec[:] = -1e300
    ind[:] = 3

    def sweep(fn, *scratch):
        lam, vl, va = r.row_lambda[:n].copy(), b.body_linear_velocity.copy(), b.body_angular_velocity.copy()
        dvs = [fn(starts, m, n, r.row_body, r.row_J, r.row_B, r.row_inv_diag, r.row_bias, r.row_lo, r.row_hi,
                  r.row_link, r.row_mu, r.row_cfm, r.row_group, lam, vl, va, bool(s.normal_block_active_set),
                  *scratch) for _ in range(3)]
        return dvs, lam, vl, va

    want = sweep(block_sweep)
    got = sweep(block_sweep_with, K, W, vec, ind)
    assert want[0] == got[0]
    for a, g in zip(want[1:], got[1:]):
        np.testing.assert_array_equal(g, a)
