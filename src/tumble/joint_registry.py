"""The World's joint bookkeeping (plain Python, run when joints change, never per step per joint):
validation against the world's bodies, world-to-body-frame conversion, the row layout, collision
exclusions of joined bodies, and breaking. It writes the joint store and the joint layout of the core
state (``tumble._core.state``): the step reads them, never this registry."""

from __future__ import annotations

import copy
import math

import numpy as np

from tumble._core import types as T
from tumble._core.collision.pair_filter import pair_key
from tumble._core.math3d import quat_to_matrix_py
from tumble.errors import JointError
from tumble.joints import Ball, Distance, Fixed, Hinge, Joint, JointBreak, Motor, Slider

_TYPE = {Ball: T.JOINT_BALL, Hinge: T.JOINT_HINGE, Slider: T.JOINT_SLIDER, Distance: T.JOINT_DISTANCE,
         Fixed: T.JOINT_FIXED}


def _perpendicular(n: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to unit ``n`` (the hinge angle's zero direction)."""
    other = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(n, other)
    return u / np.linalg.norm(u)


def _conj(q):
    return np.array([q[0], -q[1], -q[2], -q[3]])


def _qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2])


class JointRegistry:
    def __init__(self, core):
        self.w = core                          # the core state (stores, joint layout, time)
        self.specs: list[Joint] = []
        self.pairs: dict[int, int] = {}       # pair key -> joints excluding it
        self.user_pairs: dict[int, int] = {}  # pair key -> disable_collision calls
        self.breakable = False

    @property
    def row_total(self) -> int:
        """Rows of all active joints (core.joint_layout.row_total)."""
        return self.w.joint_layout.row_total

    @property
    def excluded_keys(self) -> np.ndarray:
        return self.w.joint_layout.excluded_keys

    @property
    def version(self) -> int:
        """Bumps when the collision exclusions change."""
        return self.w.joint_layout.version

    # ---------------------------------------------------------------- validation
    def check(self, joint) -> int:
        if isinstance(joint, (bool, np.bool_)) or not isinstance(joint, (int, np.integer)):
            raise JointError(f"joint id {joint!r} is not an integer")
        if not 0 <= joint < self.w.joint_store.count:
            raise JointError(f"joint id {joint} does not exist (the world has {self.w.joint_store.count} joints)")
        return int(joint)

    def _body(self, owner: str, field: str, body, allow_world: bool) -> int:
        if body is None:
            if not allow_world:
                raise JointError(f"{owner}: field {field}=None; only body a may be the world (None)")
            return -1
        if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)):
            raise JointError(f"{owner}: field {field}={body!r} is not a body id")
        n = self.w.bodies.count
        if not 0 <= body < n:
            raise JointError(f"{owner}: field {field}={body} is not a body of this world ({n} bodies)")
        if self.w.bodies.body_removed[body]:
            raise JointError(f"{owner}: field {field}={body} names a removed body (World.remove_body)")
        return int(body)

    def spec(self, joint: int) -> Joint:
        return copy.deepcopy(self.specs[self.check(joint)])

    # ---------------------------------------------------------------- adding
    def add(self, joint) -> int:
        w = self.w
        js = w.joint_store
        jid = js.count
        if not isinstance(joint, Joint) or type(joint) not in _TYPE:
            raise JointError(f"joint {jid}: {joint!r} is not a tumble joint (Ball, Hinge, Slider, Distance, Fixed)")
        joint = copy.deepcopy(joint)
        owner = joint.owner(jid)
        joint.validate(owner)
        a = self._body(owner, "a", joint.a, True)
        b = self._body(owner, "b", joint.b, False)
        if a == b:
            raise JointError(f"{owner}: fields a={a} and b={b} name the same body; a joint needs two bodies")
        fixed = w.bodies.body_fixed
        if (a < 0 or fixed[a]) and fixed[b]:
            raise JointError(f"{owner}: both bodies (a={joint.a!r}, b={b}) are fixed; the joint would do nothing")
        typ = _TYPE[type(joint)]

        # world-frame definition at creation
        xb = w.bodies.body_position[b].copy()
        if typ == T.JOINT_DISTANCE:
            anchor_a, anchor_b = joint.anchor_a, joint.anchor_b
        elif typ == T.JOINT_FIXED:
            anchor_a = anchor_b = xb if joint.anchor is None else joint.anchor
        else:
            anchor_a = anchor_b = joint.anchor
        axis = getattr(joint, "axis", np.array([0.0, 0.0, 1.0]))
        ref = _perpendicular(axis)

        i = js.append()
        js.joint_type[i] = typ
        js.joint_body[i] = (a, b)
        quats = []
        for side, (body, anchor) in enumerate(((a, anchor_a), (b, anchor_b))):
            if body < 0:
                q = np.array([1.0, 0.0, 0.0, 0.0])
                js.joint_anchor[i, side] = anchor
                js.joint_axis[i, side] = axis
                js.joint_ref[i, side] = ref
            else:
                q = w.bodies.body_orientation[body].copy()
                R = quat_to_matrix_py(q)
                js.joint_anchor[i, side] = R.T @ (anchor - w.bodies.body_position[body])
                js.joint_axis[i, side] = R.T @ axis
                js.joint_ref[i, side] = R.T @ ref
            quats.append(q)
        js.joint_rel_q[i] = _qmul(_conj(quats[0]), quats[1])
        js.joint_length[i] = getattr(joint, "length", 0.0) or 0.0
        if typ == T.JOINT_DISTANCE and joint.frequency is not None:
            js.joint_soft[i] = (joint.frequency, joint.damping_ratio)
        limits = getattr(joint, "limits", None)
        js.joint_has_limits[i] = limits is not None
        if limits is not None:
            js.joint_limit[i] = limits
        self._write_motor(i, getattr(joint, "motor", None))
        js.joint_break[i] = (joint.break_force, joint.break_torque)
        js.joint_collide[i] = joint.collide
        js.joint_active[i] = True
        js.joint_impulse[i] = 0.0
        js.joint_coord[i] = 0.0
        js.joint_force[i] = 0.0
        js.joint_torque[i] = 0.0
        self.specs.append(joint)
        if not joint.collide and a >= 0:
            self._count(self.pairs, pair_key(a, b), +1)
            self._rebuild()
        self.breakable = self.breakable or math.isfinite(joint.break_force) or math.isfinite(joint.break_torque)
        self.layout()
        return i

    def _write_motor(self, i: int, motor: Motor | None) -> None:
        js = self.w.joint_store
        if motor is None:
            js.joint_motor_mode[i] = T.MOTOR_NONE
            js.joint_motor[i] = 0.0
            return
        mode = T.MOTOR_POSITION if motor.target is not None else T.MOTOR_VELOCITY
        js.joint_motor_mode[i] = mode
        js.joint_motor[i] = (motor.speed or 0.0, motor.target or 0.0, motor.max_force, motor.frequency,
                             motor.damping_ratio)

    def set_motor(self, joint: int, motor: Motor | None) -> None:
        j = self.check(joint)
        spec = self.specs[j]
        owner = spec.owner(j)
        if not isinstance(spec, (Hinge, Slider)):
            raise JointError(f"{owner}: only hinges and sliders have motors")
        if motor is not None:
            if not isinstance(motor, Motor):
                raise JointError(f"{owner}: field motor={motor!r} is not a tumble.Motor")
            motor.validate(owner)
        had = self.w.joint_store.joint_motor_mode[j] != T.MOTOR_NONE
        self._write_motor(j, motor)
        spec.motor = motor
        if had != (motor is not None):
            self.layout()

    # ---------------------------------------------------------------- removal, breaking
    def remove(self, joint: int) -> None:
        j = self.check(joint)
        js = self.w.joint_store
        if not js.joint_active[j]:
            return
        js.joint_active[j] = False
        a, b = js.joint_body[j]
        if not js.joint_collide[j] and a >= 0:
            self._count(self.pairs, pair_key(int(a), int(b)), -1)
            self._rebuild()
        self.layout()

    def break_overloaded(self) -> list[JointBreak]:
        """After a step: remove every joint whose reaction exceeds its thresholds; returns the events."""
        if not self.breakable:
            return []
        js = self.w.joint_store
        n = js.count
        f = np.linalg.norm(js.joint_force[:n], axis=1)
        t = np.linalg.norm(js.joint_torque[:n], axis=1)
        over = js.joint_active[:n] & ((f > js.joint_break[:n, 0]) | (t > js.joint_break[:n, 1]))
        events = []
        for j in np.flatnonzero(over):
            events.append(JointBreak(int(j), self.w.step_count, self.w.time, js.joint_force[j].copy(),
                                     js.joint_torque[j].copy()))
            self.remove(int(j))
        return events

    # ---------------------------------------------------------------- rows
    def layout(self) -> None:
        """Row counts and starts of the active joints (types.JOINT_BASE_ROWS + 2 limit rows + 1 motor row)."""
        js = self.w.joint_store
        n = js.count
        base = np.asarray(T.JOINT_BASE_ROWS, dtype=np.int64)[js.joint_type[:n]]
        counts = base + 2 * js.joint_has_limits[:n] + (js.joint_motor_mode[:n] != T.MOTOR_NONE)
        counts = np.where(js.joint_active[:n], counts, 0)
        js.joint_row_count[:n] = counts
        js.joint_row_start[:n] = np.cumsum(counts) - counts
        self.w.joint_layout.row_total = int(counts.sum())

    def speed(self, joint: int) -> float:
        """Rate of the joint coordinate from the current velocities (hinge: n_a . (w_b - w_a);
        slider: d/dt n_a . (p_b - p_a) = n_a . (v_pb - v_pa) + (w_a x n_a) . (p_b - p_a))."""
        j = self.check(joint)
        w, js = self.w, self.w.joint_store
        typ = js.joint_type[j]
        if typ not in (T.JOINT_HINGE, T.JOINT_SLIDER):
            return 0.0
        bd = w.bodies
        frames = []
        for side in range(2):
            body = int(js.joint_body[j, side])
            if body < 0:
                frames.append((js.joint_anchor[j, side].copy(), js.joint_axis[j, side].copy(), np.zeros(3),
                               np.zeros(3), np.zeros(3)))
                continue
            R = quat_to_matrix_py(bd.body_orientation[body])
            r = R @ js.joint_anchor[j, side]
            om = bd.body_angular_velocity[body]
            frames.append((bd.body_position[body] + r, R @ js.joint_axis[j, side],
                           bd.body_linear_velocity[body] + np.cross(om, r), om, r))
        (pa, na, va, wa, _), (pb, _, vb, wb, _) = frames
        if typ == T.JOINT_HINGE:
            return float(na @ (wb - wa))
        return float(na @ (vb - va) + np.cross(wa, na) @ (pb - pa))

    def anchors(self) -> tuple[np.ndarray, np.ndarray]:
        """World positions (n, 2, 3) of every joint's two anchor points and (n, 2, 3) of its two
        copies of the axis, from the current poses (vectorised over joints)."""
        js, bd = self.w.joint_store, self.w.bodies
        n = js.count
        p = js.joint_anchor[:n].copy()
        ax = js.joint_axis[:n].copy()
        for side in range(2):
            body = js.joint_body[:n, side]
            real = body >= 0
            if not real.any():
                continue
            from tumble._core.math3d import quat_to_matrices

            R = quat_to_matrices(bd.body_orientation[body[real]])
            p[real, side] = bd.body_position[body[real]] + np.einsum("nij,nj->ni", R, js.joint_anchor[:n][real, side])
            ax[real, side] = np.einsum("nij,nj->ni", R, js.joint_axis[:n][real, side])
        return p, ax

    def errors(self) -> np.ndarray:
        """(n,) position error of every joint [m]: the anchor separation for ball, hinge and fixed
        joints, |distance - length| for distance joints, the distance of b's anchor from a's line for
        sliders; NaN for removed or broken joints. Angular errors are not included."""
        js = self.w.joint_store
        n = js.count
        p, ax = self.anchors()
        d = p[:, 1] - p[:, 0]
        err = np.linalg.norm(d, axis=1)
        typ = js.joint_type[:n]
        dist = typ == T.JOINT_DISTANCE
        err[dist] = np.abs(err[dist] - js.joint_length[:n][dist])
        sl = typ == T.JOINT_SLIDER
        if sl.any():
            along = np.einsum("ni,ni->n", d[sl], ax[sl, 0])
            err[sl] = np.linalg.norm(d[sl] - along[:, None] * ax[sl, 0], axis=1)
        err[~js.joint_active[:n]] = np.nan
        return err

    # ---------------------------------------------------------------- collision exclusions
    @staticmethod
    def _count(table: dict, key: int, delta: int) -> None:
        table[key] = table.get(key, 0) + delta
        if table[key] <= 0:
            del table[key]

    def exclude(self, a: int, b: int, delta: int) -> None:
        if a == b:
            raise JointError(f"disable_collision: a={a} and b={b} are the same body")
        key = pair_key(a, b)
        if delta < 0 and key not in self.user_pairs:
            return
        self._count(self.user_pairs, key, delta)
        self._rebuild()

    def drop_body(self, body: int) -> None:
        """Forget the user's collision exclusions of a removed body (its joints are removed first)."""
        mine = [k for k in self.user_pairs if (k >> 32) == body or (k & 0xFFFFFFFF) == body]
        for k in mine:
            del self.user_pairs[k]
        if mine:
            self._rebuild()

    def excluded(self, a: int, b: int) -> bool:
        key = pair_key(a, b)
        return key in self.pairs or key in self.user_pairs

    def _rebuild(self) -> None:
        keys = sorted(set(self.pairs) | set(self.user_pairs))
        self.w.joint_layout.excluded_keys = np.array(keys, dtype=np.int64)
        self.w.joint_layout.version += 1
