"""MuJoCo peer: a ``SceneSpec`` as an MJCF model.

Mapping (``spec.settings`` with tumble's defaults where absent):

* ``<option timestep=dt iterations=iterations gravity=... solver="PGS" cone="pyramidal"
  integrator="Euler">`` -- MuJoCo's projected Gauss-Seidel on the dual, with pyramidal friction
  cones (the closest to tumble's PGS with box friction); ``solver`` can be overridden
  (``MuJoCoPeer(solver="Newton")``) and is reported in ``settings`` and the peer ``name``;
* ``warm_start=False`` -> ``<flag warmstart="disable"/>``;
* every dynamic body: a ``<freejoint/>``, an explicit ``<inertial>`` with the spec's mass and
  diagonal inertia, one geom (box / sphere / capsule) with ``condim="3"`` (sliding friction only,
  no torsional or rolling friction) and ``friction="mu 0 0"``;
* fixed bodies: static geoms of the world body (planes: ``type="plane" size="0 0 1"``).

Mismatches that remain (listed in ``notes``): MuJoCo contacts are soft (``solref``/``solimp``,
MuJoCo defaults, time constant clamped to 2 dt); there is no Baumgarte fraction to map
``baumgarte`` or ``slop`` onto. MuJoCo combines a pair's friction as the maximum of the two
geoms' (tumble: geometric mean) -- equal for scenes with one friction value -- and has no
restitution coefficient (restitution is ignored; every library scene uses 0).

Joints (``spec.joints``): every body keeps its ``<freejoint/>`` (maximal coordinates, as in tumble)
and each joint becomes equality constraints:

* ``Ball`` -> ``<connect body1 body2 anchor>`` (anchor in body1's frame; body2's point from the
  initial pose, ``qpos0``);
* ``Hinge`` -> two ``<connect>`` at ``anchor -+ h axis`` (``h``: ``benchmarks.peers.hinge_arm``, half
  the smaller bounding radius of the two links): a hinge joint would need the kinematic tree (reduced
  coordinates); the point pair removes the same 5 degrees of freedom. Limits and motors are not
  modelled;
* ``Fixed`` -> ``<weld>`` (relative pose from ``qpos0``, weld point at the anchor);
* ``Slider``, ``Distance``: unsupported (``Unsupported``);
* a joint to the world (``a=None``) omits ``body2``; a fixed spec body that is joined or excluded from
  collisions becomes a static ``<body name="b<i>">`` (no joint) at the world origin holding its geom;
* joined pairs (``collide=False``) and ``spec.no_collide``: ``<contact><exclude body1 body2/>``.

Equality constraints are soft like MuJoCo's contacts (default ``solref``/``solimp``, time constant
clamped to 2 dt): there is no exact counterpart of tumble's Baumgarte joint correction.
``joint_errors()`` measures the anchors of the definitions (not the hinge's two points) from the body
poses, as tumble does.

Timed spawns (``BodySpec.spawn_time > 0``): MuJoCo cannot add bodies to a compiled model, so a
spawned dynamic body is built *parked*: at (0, 0, -1000 - 10 k) m (k = its rank among the spawned
bodies), with gravity compensation (``gravcomp="1"``) and its geom's ``contype``/``conaffinity``
0 (it collides with nothing); its pose and velocity are also reset to the parked state before
every step. At the start of the first step whose start time is >= its spawn time (the rule of
``World.spawn``) it gets the spec's pose and velocity, gravity and collisions. A spawned fixed body
is a static geom at its spec pose that collides with nothing until then. ``state()`` returns all
spec bodies in spec order (parked ones where they are parked).
"""

from __future__ import annotations

import numpy as np
from benchmarks.peers import Peer, check_supported, excluded_pairs, hinge_points, joint_frames, joint_notes, to_local


def _quat_mul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw)


def _f(v) -> str:
    return " ".join(repr(float(x)) for x in v)


def parked_positions(spec) -> dict[int, tuple]:
    """{spec index: parked position [m]} of the spawned dynamic bodies (see the module docstring)."""
    out = {}
    for i, b in enumerate(spec.bodies):
        if float(b.spawn_time) > 0.0 and not b.fixed:
            out[i] = (0.0, 0.0, -1000.0 - 10.0 * len(out))
    return out


def scene_mjcf(spec, solver: str = "PGS") -> str:
    """The MJCF text of ``spec`` (see the module docstring)."""
    from tumble.scenes.metrics import spec_mass_properties
    from tumble.shapes import Box, Capsule, Plane, Sphere

    masses, inertias = spec_mass_properties(spec)
    park = parked_positions(spec)
    st = spec.settings
    lines = [f'<mujoco model="{spec.name or "scene"}">', '  <compiler angle="radian"/>',
             f'  <option timestep="{spec.dt!r}" iterations="{int(st.get("iterations", 10))}" '
             f'gravity="{_f(spec.gravity)}" solver="{solver}" cone="pyramidal" integrator="Euler">']
    if not st.get("warm_start", True):
        lines.append('    <flag warmstart="disable"/>')
    lines.append("  </option>")
    n_dyn = sum(1 for b in spec.bodies if not b.fixed)
    # arena for contacts / constraint rows: a brick of a standing ring tower uses ~130 KB (tower320:
    # 41.6 MB, 40 courses: 106 MB measured), so 256 KB per dynamic body; untouched arena pages cost nothing
    mem_mb = max(16, 1 + n_dyn // 4)
    lines.append(f'  <size memory="{mem_mb}M"/>')
    lines.append('  <default><geom condim="3"/></default>')
    lines.append("  <worldbody>")
    exclude = excluded_pairs(spec)
    frames = joint_frames(spec)
    # fixed bodies that a joint or an exclusion names get a static body of their own (at the origin)
    named_static = {i for pair in exclude for i in pair} | {int(i) for i in frames.bodies.ravel() if i >= 0}
    named_static = {i for i in named_static if spec.bodies[i].fixed}
    for i, b in enumerate(spec.bodies):
        s = b.shape
        fr = f'friction="{float(b.material.friction)!r} 0 0"'
        if float(b.spawn_time) > 0.0:
            fr += ' contype="0" conaffinity="0"'        # parked: collides with nothing until spawned
        if isinstance(s, Box):
            g = f'type="box" size="{_f(s.half_extents)}"'
        elif isinstance(s, Sphere):
            g = f'type="sphere" size="{float(s.radius)!r}"'
        elif isinstance(s, Capsule):
            g = f'type="capsule" size="{float(s.radius)!r} {float(s.half_length)!r}"'
        else:
            g = 'type="plane" size="0 0 1"'
        if b.fixed:
            q = b.orientation
            if isinstance(s, Plane):
                q = _quat_mul(q, s.local_rotation())
            geom = f'<geom name="g{i}" {g} pos="{_f(b.position)}" quat="{_f(q)}" {fr}/>'
            if i in named_static:
                lines += [f'    <body name="b{i}">', f"      {geom}", "    </body>"]
            else:
                lines.append(f"    {geom}")
        else:
            I = np.diag(inertias[i])
            if i in park:
                lines.append(f'    <body name="b{i}" pos="{_f(park[i])}" gravcomp="1">')
            else:
                lines.append(f'    <body name="b{i}" pos="{_f(b.position)}" quat="{_f(b.orientation)}">')
            lines.append("      <freejoint/>")
            lines.append(f'      <inertial pos="0 0 0" mass="{float(masses[i])!r}" diaginertia="{_f(I)}"/>')
            lines.append(f'      <geom name="g{i}" {g} {fr}/>')
            lines.append("    </body>")
    lines.append("  </worldbody>")
    eq = _equality_lines(spec, frames, named_static)
    if eq:
        lines += ["  <equality>"] + eq + ["  </equality>"]
    ex = [(u, v) for u, v in exclude if not (spec.bodies[u].fixed and spec.bodies[v].fixed)]
    if ex:
        lines += ["  <contact>"] + [f'    <exclude body1="b{u}" body2="b{v}"/>' for u, v in ex] + ["  </contact>"]
    lines.append("</mujoco>")
    return "\n".join(lines)


def _equality_lines(spec, frames, named_static) -> list[str]:
    """``<connect>`` / ``<weld>`` lines of the joints (see the module docstring)."""
    out = []
    for k, kind in enumerate(frames.kinds):
        a, b = (int(x) for x in frames.bodies[k])
        dyn, other = (b, a) if a < 0 or spec.bodies[a].fixed else (a, b)
        bd = spec.bodies[dyn]
        body2 = "" if other < 0 else f' body2="b{other}"'
        if kind == "fixed":
            # weld point relative to body2 (the world frame for the world and the static bodies at the origin)
            P = frames.anchor[k, 0]
            if other >= 0 and not spec.bodies[other].fixed:
                bo = spec.bodies[other]
                P = to_local(P, bo.position, bo.orientation)
            out.append(f'    <weld name="j{k}" body1="b{dyn}"{body2} anchor="{_f(P)}"/>')
            continue
        points = [frames.anchor[k, 0]] if kind == "ball" else list(hinge_points(spec, frames, k))
        for n, P in enumerate(points):
            loc = to_local(P, bd.position, bd.orientation)
            out.append(f'    <connect name="j{k}_{n}" body1="b{dyn}"{body2} anchor="{_f(loc)}"/>')
    return out


class MuJoCoPeer(Peer):
    def __init__(self, solver: str = "PGS"):
        super().__init__()
        import mujoco

        self.mj = mujoco
        self.solver = solver
        self.name = f"mujoco {mujoco.__version__} ({solver})"
        self.model = None
        self.data = None

    def build(self, spec) -> MuJoCoPeer:
        check_supported(spec, "mujoco")
        spec.validate()
        mj = self.mj
        self.spec = spec
        self.xml = scene_mjcf(spec, self.solver)
        self.model = mj.MjModel.from_xml_string(self.xml)
        self.data = mj.MjData(self.model)
        self.dynamic = np.array([i for i, b in enumerate(spec.bodies) if not b.fixed], dtype=np.int64)
        self.fixed = np.array([i for i, b in enumerate(spec.bodies) if b.fixed], dtype=np.int64)
        # the k-th dynamic spec body is MuJoCo body k+1 with qpos[7k:7k+7], qvel[6k:6k+6]
        self._slot = {int(i): k for k, i in enumerate(self.dynamic)}
        self._park = parked_positions(spec)
        self._pending = [i for i, b in enumerate(spec.bodies) if float(b.spawn_time) > 0.0]
        for k, i in enumerate(self.dynamic):
            b = spec.bodies[i]
            if int(i) in self._park:
                continue
            if any(b.linear_velocity) or any(b.angular_velocity):
                R = self._rot(np.asarray(b.orientation, dtype=float)[None])[0]
                self.data.qvel[6 * k:6 * k + 3] = b.linear_velocity
                self.data.qvel[6 * k + 3:6 * k + 6] = R.T @ np.asarray(b.angular_velocity, dtype=float)
        mj.mj_forward(self.model, self.data)
        st = spec.settings
        self.settings = {"timestep": spec.dt, "iterations": int(st.get("iterations", 10)),
                         "solver": self.solver, "cone": "pyramidal", "integrator": "Euler",
                         "warmstart": bool(st.get("warm_start", True)), "condim": 3,
                         "solref": "default (clamped to 2 dt)", "solimp": "default"}
        self.notes = ["soft contacts (solref/solimp defaults): no Baumgarte fraction or slop to match"]
        self._frames = joint_frames(spec)
        if spec.joints:
            self.notes.append("soft equality constraints for the joints (solref/solimp defaults)")
            self.notes += joint_notes(spec)
        if any(b.material.restitution > 0 for b in spec.bodies):
            self.notes.append("restitution ignored (MuJoCo has no restitution coefficient)")
        if len({float(b.material.friction) for b in spec.bodies}) > 1:
            self.notes.append("pair friction = max of the two (tumble: geometric mean)")
        fixed_bodies = [spec.bodies[i] for i in self.fixed]
        self._fixed_pos = np.array([b.position for b in fixed_bodies], dtype=float).reshape(-1, 3)
        self._fixed_quat = np.array([b.orientation for b in fixed_bodies], dtype=float).reshape(-1, 4)
        self.time = 0.0
        return self

    @staticmethod
    def _rot(q):
        from tumble._core.math3d import quat_to_matrices

        return quat_to_matrices(q)

    def _geom(self, i: int) -> int:
        return self.mj.mj_name2id(self.model, self.mj.mjtObj.mjOBJ_GEOM, f"g{i}")

    def _spawn_due(self) -> None:
        """Park the bodies not spawned yet; release those due at the start of this step."""
        t = float(self.data.time)
        while self._pending and t >= float(self.spec.bodies[self._pending[0]].spawn_time) - 1e-9:
            i = self._pending.pop(0)
            b = self.spec.bodies[i]
            g = self._geom(i)
            self.model.geom_contype[g] = 1
            self.model.geom_conaffinity[g] = 1
            if i in self._slot:
                k = self._slot[i]
                self.model.body_gravcomp[self.model.geom_bodyid[g]] = 0.0
                q = np.asarray(b.orientation, dtype=float)
                q = q / np.linalg.norm(q)
                self.data.qpos[7 * k:7 * k + 3] = b.position
                self.data.qpos[7 * k + 3:7 * k + 7] = q
                R = self._rot(q[None])[0]
                self.data.qvel[6 * k:6 * k + 3] = b.linear_velocity
                self.data.qvel[6 * k + 3:6 * k + 6] = R.T @ np.asarray(b.angular_velocity, dtype=float)
        for i in self._pending:
            if i in self._slot:
                k = self._slot[i]
                self.data.qpos[7 * k:7 * k + 3] = self._park[i]
                self.data.qpos[7 * k + 3:7 * k + 7] = (1.0, 0.0, 0.0, 0.0)
                self.data.qvel[6 * k:6 * k + 6] = 0.0

    def step(self) -> None:
        if self._pending:
            self._spawn_due()
        self.mj.mj_step(self.model, self.data)
        self.time = float(self.data.time)

    def state(self):
        n = len(self.spec.bodies)
        k = len(self.dynamic)
        qpos = self.data.qpos[: 7 * k].reshape(k, 7)
        qvel = self.data.qvel[: 6 * k].reshape(k, 6)
        pos = np.zeros((n, 3))
        quat = np.zeros((n, 4))
        lin = np.zeros((n, 3))
        ang = np.zeros((n, 3))
        pos[self.dynamic] = qpos[:, :3]
        quat[self.dynamic] = qpos[:, 3:]
        lin[self.dynamic] = qvel[:, :3]
        R = self._rot(qpos[:, 3:]) if k else np.zeros((0, 3, 3))
        ang[self.dynamic] = np.einsum("nij,nj->ni", R, qvel[:, 3:])   # body frame -> world
        pos[self.fixed] = self._fixed_pos
        quat[self.fixed] = self._fixed_quat
        return pos, quat, lin, ang

    def max_penetration(self) -> float:
        nc = self.data.ncon
        if nc == 0:
            return 0.0
        return max(0.0, -float(self.data.contact.dist[:nc].min()))
