"""Structure-of-arrays stores with capacity growth.

Arrays are float64 (or int64/bool), C-contiguous, named ``<entity>_<field>``; the first ``count``
rows are live. Growth doubles the capacity and copies; kernels only ever see the arrays.
"""

from __future__ import annotations

import numpy as np


class Store:
    """Base: subclasses list their fields as ``FIELDS = {name: (trailing_shape, dtype, fill)}``."""

    FIELDS: dict = {}

    def __init__(self, capacity: int = 16):
        self.count = 0
        self.capacity = 0
        for name, (shape, dtype, fill) in self.FIELDS.items():
            setattr(self, name, np.full((0, *shape), fill, dtype=dtype))
        self.reserve(capacity)

    def reserve(self, capacity: int) -> None:
        if capacity <= self.capacity:
            return
        new_cap = max(capacity, 2 * self.capacity, 16)
        for name, (shape, dtype, fill) in self.FIELDS.items():
            old = getattr(self, name)
            arr = np.full((new_cap, *shape), fill, dtype=dtype)
            arr[: self.count] = old[: self.count]
            setattr(self, name, arr)
        self.capacity = new_cap

    def append(self) -> int:
        """Reserve one more row; returns its index (the row holds the fill values)."""
        self.reserve(self.count + 1)
        self.count += 1
        return self.count - 1


_ID_Q = np.array([1.0, 0.0, 0.0, 0.0])


class BodyStore(Store):
    """Bodies. Position is the centre of mass; orientation maps body frame to world.

    body_position (n, 3) [m]; body_orientation (n, 4) unit quaternion (w, x, y, z);
    body_linear_velocity (n, 3) [m/s]; body_angular_velocity (n, 3) [rad/s], world frame;
    body_inv_mass (n,) [1/kg] (0 for fixed bodies); body_mass (n,) [kg];
    body_inertia_local (n, 3, 3) [kg m^2] and body_inv_inertia_local (n, 3, 3) in the body frame;
    body_inv_inertia_world (n, 3, 3) = R I^-1 R^T, refreshed every step (Catto 001 §5);
    body_force (n, 3) [N] and body_torque (n, 3) [N m] user forces, cleared after each step;
    body_fixed (n,) bool; body_contact_count (n,) int (points touching the body this step);
    body_removed (n,) bool: removed by ``World.remove_body`` (a fixed tombstone, ``_core.removal``).
    Solver-private per-body arrays (e.g. the impulse solver's sleep state) live in the solver.
    """

    FIELDS = {
        "body_position": ((3,), np.float64, 0.0),
        "body_orientation": ((4,), np.float64, 0.0),
        "body_linear_velocity": ((3,), np.float64, 0.0),
        "body_angular_velocity": ((3,), np.float64, 0.0),
        "body_inv_mass": ((), np.float64, 0.0),
        "body_mass": ((), np.float64, 0.0),
        "body_inertia_local": ((3, 3), np.float64, 0.0),
        "body_inv_inertia_local": ((3, 3), np.float64, 0.0),
        "body_inv_inertia_world": ((3, 3), np.float64, 0.0),
        "body_force": ((3,), np.float64, 0.0),
        "body_torque": ((3,), np.float64, 0.0),
        "body_fixed": ((), np.bool_, False),
        "body_contact_count": ((), np.int64, 0),
        "body_removed": ((), np.bool_, False),
    }


class GeomStore(Store):
    """Collision geometry attached to bodies (a Compound body owns several geoms).

    geom_body (n,) int; geom_type (n,) int (types.GEOM_*); geom_size (n, 3) [m] (see shapes);
    geom_hull (n,) int hull index or -1; geom_local_position (n, 3) [m] and
    geom_local_orientation (n, 4) relative to the body frame; geom_world_position (n, 3),
    geom_world_rotation (n, 3, 3) refreshed every step; geom_aabb_min / geom_aabb_max (n, 3) [m];
    geom_fat_min / geom_fat_max (n, 3) [m] the enlarged boxes the broad phase sees;
    geom_radius (n,) [m] bounding radius about the geom origin (inf for planes);
    geom_friction (n,), geom_restitution (n,) from the body's material; geom_static (n,) bool.
    """

    FIELDS = {
        "geom_body": ((), np.int64, -1),
        "geom_type": ((), np.int64, -1),
        "geom_size": ((3,), np.float64, 0.0),
        "geom_hull": ((), np.int64, -1),
        "geom_local_position": ((3,), np.float64, 0.0),
        "geom_local_orientation": ((4,), np.float64, 0.0),
        "geom_world_position": ((3,), np.float64, 0.0),
        "geom_world_rotation": ((3, 3), np.float64, 0.0),
        "geom_aabb_min": ((3,), np.float64, 0.0),
        "geom_aabb_max": ((3,), np.float64, 0.0),
        "geom_fat_min": ((3,), np.float64, 0.0),
        "geom_fat_max": ((3,), np.float64, 0.0),
        "geom_radius": ((), np.float64, 0.0),
        "geom_friction": ((), np.float64, 0.0),
        "geom_restitution": ((), np.float64, 0.0),
        "geom_static": ((), np.bool_, False),
    }


class ContactStore(Store):
    """Contact points of the current step, grouped by manifold, manifolds sorted by pair key.

    contact_geom_a/b, contact_body_a/b (n,) int (body -1 never happens here: fixed bodies keep
    their id; rows map them to -1); contact_key (n,) int64 = geom_a * 2^31 + geom_b;
    contact_feature (n,) int64; contact_point (n, 3) [m]; contact_normal (n, 3) from a to b;
    contact_depth (n,) [m] (positive = overlap); contact_friction (n,), contact_restitution (n,);
    contact_normal_impulse (n,) [N s]; contact_friction_impulse (n, 3) [N s] world vector;
    contact_match (n,) int: the index of the previous step's point this one continues (contact
    cache, -1 for a new point; solvers carry their own per-contact values with it);
    contact_warm (n,) bool: matched in the cache this step.
    """

    FIELDS = {
        "contact_geom_a": ((), np.int64, -1),
        "contact_geom_b": ((), np.int64, -1),
        "contact_body_a": ((), np.int64, -1),
        "contact_body_b": ((), np.int64, -1),
        "contact_key": ((), np.int64, 0),
        "contact_feature": ((), np.int64, 0),
        "contact_point": ((3,), np.float64, 0.0),
        "contact_normal": ((3,), np.float64, 0.0),
        "contact_depth": ((), np.float64, 0.0),
        "contact_friction": ((), np.float64, 0.0),
        "contact_restitution": ((), np.float64, 0.0),
        "contact_normal_impulse": ((), np.float64, 0.0),
        "contact_friction_impulse": ((3,), np.float64, 0.0),
        "contact_match": ((), np.int64, -1),
        "contact_warm": ((), np.bool_, False),
    }


class RowStore(Store):
    """Constraint rows in Catto's pairwise sparse layout (001 eq. 12-13, Alg. 4).

    row_body (s, 2) int: Jmap, body index or -1 for a fixed body; row_J (s, 2, 6): Jsp, the two
    6-blocks (linear, angular) of each row; row_B (s, 2, 6): Bsp = M^-1 J^T blocks; row_inv_diag
    (s,) 1 / (J B)_ii (0 for an empty row); row_bias (s,) [m/s] velocity target (zeta);
    row_bias_relax (s,) [m/s] the same target without position feedback (relax pass); row_lo,
    row_hi (s,) [N s] impulse bounds; row_link (s,) int: for a friction row the index of its normal
    row (|lambda_t| <= mu lambda_n), else -1; row_mu (s,); row_kind (s,) int (types.ROW_*);
    row_lambda (s,) [N s] accumulated impulse; row_owner (s,) int: the contact point (or joint) the
    row belongs to; row_cfm (s,) [(m/s) / (N s)] the row's own constraint force mixing gamma (a soft
    row, e.g. a position servo: J v + gamma lambda = zeta), 0 for rigid rows; row_group (s,) int:
    1 for a row solved on its own, g >= 2 for the first of g consecutive unbounded rows solved
    together (a joint's equality rows, one dense g x g solve per visit), 0 for the other rows of
    such a group (their head solves them).
    """

    FIELDS = {
        "row_body": ((2,), np.int64, -1),
        "row_J": ((2, 6), np.float64, 0.0),
        "row_B": ((2, 6), np.float64, 0.0),
        "row_inv_diag": ((), np.float64, 0.0),
        "row_bias": ((), np.float64, 0.0),
        "row_bias_relax": ((), np.float64, 0.0),
        "row_lo": ((), np.float64, 0.0),
        "row_hi": ((), np.float64, 0.0),
        "row_link": ((), np.int64, -1),
        "row_mu": ((), np.float64, 0.0),
        "row_kind": ((), np.int64, 0),
        "row_lambda": ((), np.float64, 0.0),
        "row_owner": ((), np.int64, -1),
        "row_cfm": ((), np.float64, 0.0),
        "row_group": ((), np.int64, 1),
    }


class JointStore(Store):
    """Joints (tumble.joints), one row per joint ever added; removed or broken joints stay with
    ``joint_active`` False so joint ids never change.

    joint_type (n,) int (types.JOINT_*); joint_body (n, 2) int, -1 for the world;
    joint_anchor (n, 2, 3) [m] each side's anchor in its body frame relative to the centre of mass
    (the world point itself for the world side); joint_axis (n, 2, 3) each side's copy of the axis,
    body frame; joint_ref (n, 2, 3) each side's reference direction perpendicular to the axis (the
    hinge angle is measured between them); joint_rel_q (n, 4) q_a^-1 q_b at creation (angular locks);
    joint_length (n,) [m]; joint_soft (n, 2) (frequency [Hz], damping ratio) of a distance spring,
    frequency 0 = rigid; joint_has_limits (n,) bool; joint_limit (n, 2) [rad or m];
    joint_motor_mode (n,) int (types.MOTOR_*); joint_motor (n, 5): speed [rad/s or m/s], target
    [rad or m], max force [N m or N], frequency [Hz], damping ratio; joint_break (n, 2): force [N],
    torque [N m] thresholds; joint_collide (n,) bool; joint_active (n,) bool;
    joint_row_start (n,), joint_row_count (n,) int: the joint's rows after the contact rows;
    joint_impulse (n, 8) [N s or N m s] the last step's row impulses (warm start);
    joint_coord (n,) hinge angle
    (unwrapped) [rad] or slider translation [m] since creation; joint_force (n, 3) [N],
    joint_torque (n, 3) [N m] the reaction on b during the last step (about b's anchor, world frame);
    joint_lever (n, 3) [m] b's anchor minus its centre of mass when the rows were built.
    """

    FIELDS = {
        "joint_type": ((), np.int64, 0),
        "joint_body": ((2,), np.int64, -1),
        "joint_anchor": ((2, 3), np.float64, 0.0),
        "joint_axis": ((2, 3), np.float64, 0.0),
        "joint_ref": ((2, 3), np.float64, 0.0),
        "joint_rel_q": ((4,), np.float64, 0.0),
        "joint_length": ((), np.float64, 0.0),
        "joint_soft": ((2,), np.float64, 0.0),
        "joint_has_limits": ((), np.bool_, False),
        "joint_limit": ((2,), np.float64, 0.0),
        "joint_motor_mode": ((), np.int64, 0),
        "joint_motor": ((5,), np.float64, 0.0),
        "joint_break": ((2,), np.float64, np.inf),
        "joint_collide": ((), np.bool_, False),
        "joint_active": ((), np.bool_, False),
        "joint_row_start": ((), np.int64, 0),
        "joint_row_count": ((), np.int64, 0),
        "joint_impulse": ((8,), np.float64, 0.0),
        "joint_coord": ((), np.float64, 0.0),
        "joint_lever": ((3,), np.float64, 0.0),
        "joint_force": ((3,), np.float64, 0.0),
        "joint_torque": ((3,), np.float64, 0.0),
    }
