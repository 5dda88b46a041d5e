"""PyBullet peer: a ``SceneSpec`` as PyBullet multibodies in DIRECT mode.

Settings mapped from the spec (``spec.settings`` with tumble's defaults where absent):

* ``setTimeStep(spec.dt)``, gravity, ``numSolverIterations = iterations`` (default 10);
* ``contactERP = erp = baumgarte`` (default 0.2): Bullet's ERP is, like tumble's ``baumgarte``, the
  fraction of the penetration removed per step; ``useSplitImpulse = 0`` so the Baumgarte term goes
  into the velocity solve as in tumble's PGS;
* ``contactSlop = slop`` when given; ``warmStartingFactor`` 0.85 (Bullet's default) or 0 when
  ``warm_start`` is False; ``restitutionVelocityThreshold`` when given;
* pyramid friction (``enableConeFriction = 0``): two friction directions per contact point, as in
  tumble; ``deterministicOverlappingPairs = 1``;
* per body: mass and diagonal inertia from the spec (``localInertiaDiagonal``), no damping,
  no rolling/spinning friction, sleeping disabled (every engine does the full work each step).

Bullet combines a pair's friction as the product ``mu_a * mu_b`` and restitution as ``e_a * e_b``;
tumble uses ``sqrt(mu_a mu_b)`` and ``max(e_a, e_b)``. Each body therefore gets lateral friction
``sqrt(mu)`` (the product is then exactly tumble's geometric mean); restitution is passed as is,
which matches only when it is 0 for one side of every pair or equal to 1 (noted in ``notes``).

Joints (``spec.joints``, maximal coordinates: every body stays a free rigid body and the joints are
``createConstraint`` constraints solved with the contacts, like tumble's joint rows):

* ``Ball`` -> ``JOINT_POINT2POINT`` at the anchor;
* ``Hinge`` -> two ``JOINT_POINT2POINT`` at ``anchor -+ h axis`` (``h``: ``benchmarks.peers.hinge_arm``,
  half the smaller bounding radius of the two links): PyBullet's ``JOINT_REVOLUTE`` exists only in
  reduced coordinates (``createConstraint`` refuses it between maximal-coordinate bodies), and the
  point pair removes the same 5 degrees of freedom; limits and motors are not modelled;
* ``Fixed`` -> three ``JOINT_POINT2POINT`` at ``anchor``, ``anchor + h u``, ``anchor + h v`` (``u``, ``v``
  perpendicular unit vectors; ``benchmarks.peers.weld_points``): PyBullet's ``JOINT_FIXED`` between
  maximal-coordinate bodies ignores the frame orientations and forces the two bodies to the *same*
  world orientation (PyBullet 3.2.7, measured), so it cannot hold a weld of bodies whose initial
  orientations differ;
* ``Slider``, ``Distance``: unsupported (``Unsupported``);
* a joint to the world (``a=None``) attaches to a static body without collision shape at the origin
  (PyBullet refuses ``createConstraint`` to the world for maximal-coordinate bodies);
* ``maxForce`` 1e9 on every constraint (PyBullet's default is 500 N), joint ``erp`` = ``baumgarte``;
* joined bodies (``collide=False``) and ``spec.no_collide`` pairs: ``setCollisionFilterPair(.., 0)``.

``joint_errors()`` measures the anchors of the definitions (not the hinge's two points) from the body
poses, as tumble does.

Timed spawns (``BodySpec.spawn_time > 0``): the body is created at the start of the first step
whose start time is >= its spawn time (the rule of ``World.spawn``); until then ``state()``
reports its spec pose and velocity.
"""

from __future__ import annotations

import math

import numpy as np
from benchmarks.peers import (
    Peer,
    check_supported,
    excluded_pairs,
    hinge_points,
    joint_frames,
    joint_notes,
    to_local,
    weld_points,
)

#: ``maxForce`` of every joint constraint [N] (PyBullet's default of 500 N would let heavy links sag).
JOINT_MAX_FORCE = 1e9


class PyBulletPeer(Peer):
    def __init__(self):
        super().__init__()
        import pybullet

        self.p = pybullet
        self.name = f"pybullet {pybullet.getAPIVersion()}"
        try:
            from importlib.metadata import version

            self.name = f"pybullet {version('pybullet')}"
        except Exception:
            pass
        self.client = None
        self.ids: list[int] = []

    def build(self, spec) -> PyBulletPeer:
        from tumble.scenes.metrics import spec_mass_properties

        check_supported(spec, "pybullet")
        spec.validate()
        p = self.p
        self.spec = spec
        self.client = c = p.connect(p.DIRECT)
        st = spec.settings
        self.settings = {
            "fixedTimeStep": spec.dt,
            "numSolverIterations": int(st.get("iterations", 10)),
            "erp": float(st.get("baumgarte", 0.2)),
            "contactERP": float(st.get("baumgarte", 0.2)),
            "useSplitImpulse": 0,
            "warmStartingFactor": 0.85 if st.get("warm_start", True) else 0.0,
            "enableConeFriction": 0,
            "deterministicOverlappingPairs": 1,
        }
        if "slop" in st:
            self.settings["contactSlop"] = float(st["slop"])
        if "restitution_threshold" in st:
            self.settings["restitutionVelocityThreshold"] = float(st["restitution_threshold"])
        p.setPhysicsEngineParameter(physicsClientId=c, **self.settings)
        p.setTimeStep(spec.dt, physicsClientId=c)
        p.setGravity(*spec.gravity, physicsClientId=c)
        self._masses, self._inertias = spec_mass_properties(spec)
        self._shape_cache: dict = {}
        self._rest: set = set()
        n = len(spec.bodies)
        self.ids = [None] * n
        self._exclude = excluded_pairs(spec)
        self._pending = [i for i, b in enumerate(spec.bodies) if float(b.spawn_time) > 0.0]
        for i in range(n):
            if i not in self._pending:
                self._create(i)
        self._frames = joint_frames(spec)
        self._world = None                                # static body at the origin for joints to the world
        self.constraints: list[list[int]] = []          # per spec joint: PyBullet constraint ids
        for k in range(len(spec.joints)):
            self.constraints.append(self._make_joint(k))
        self.notes = joint_notes(spec)
        for b in spec.bodies:
            e = float(b.material.restitution)
            if e not in (0.0, 1.0):
                self._rest.add(e)
        if self._rest:
            self.notes.append(f"restitution {sorted(self._rest)} combined as a product (tumble: max)")
        self.time = 0.0
        return self

    def _create(self, i: int) -> None:
        """Create spec body ``i`` in its spec pose and velocity."""
        from tumble.shapes import Box, Capsule, Sphere

        p, c, b = self.p, self.client, self.spec.bodies[i]
        s = b.shape
        if isinstance(s, Box):
            key = ("box", s.half_extents)
            make = lambda s=s: p.createCollisionShape(p.GEOM_BOX, halfExtents=list(s.half_extents),
                                                      physicsClientId=c)
        elif isinstance(s, Sphere):
            key = ("sphere", s.radius)
            make = lambda s=s: p.createCollisionShape(p.GEOM_SPHERE, radius=s.radius, physicsClientId=c)
        elif isinstance(s, Capsule):
            key = ("capsule", s.radius, s.half_length)
            make = lambda s=s: p.createCollisionShape(p.GEOM_CAPSULE, radius=s.radius,
                                                      height=2.0 * s.half_length, physicsClientId=c)
        else:  # Plane (fixed, checked above)
            key = ("plane", s.normal)
            make = lambda s=s: p.createCollisionShape(p.GEOM_PLANE, planeNormal=list(s.normal),
                                                      physicsClientId=c)
        if key not in self._shape_cache:
            self._shape_cache[key] = make()
        w, x, y, z = b.orientation
        bid = p.createMultiBody(baseMass=0.0 if b.fixed else float(self._masses[i]),
                                baseCollisionShapeIndex=self._shape_cache[key],
                                basePosition=list(b.position), baseOrientation=[x, y, z, w],
                                useMaximalCoordinates=True,
                                physicsClientId=c)
        mu = float(b.material.friction)
        e = float(b.material.restitution)
        kw = dict(lateralFriction=math.sqrt(mu), restitution=e, rollingFriction=0.0, spinningFriction=0.0,
                  linearDamping=0.0, angularDamping=0.0)
        if not b.fixed:
            kw["mass"] = float(self._masses[i])             # maximal coordinates: set with the inertia
            kw["localInertiaDiagonal"] = [float(v) for v in np.diag(self._inertias[i])]
            kw["activationState"] = p.ACTIVATION_STATE_DISABLE_SLEEPING
        p.changeDynamics(bid, -1, physicsClientId=c, **kw)
        if not b.fixed and (any(b.linear_velocity) or any(b.angular_velocity)):
            p.resetBaseVelocity(bid, list(b.linear_velocity), list(b.angular_velocity), physicsClientId=c)
        self.ids[i] = bid
        for u, v in self._exclude:                       # pairs that must not collide, once both exist
            if i in (u, v) and self.ids[u] is not None and self.ids[v] is not None:
                p.setCollisionFilterPair(self.ids[u], self.ids[v], -1, -1, 0, physicsClientId=c)

    def _make_joint(self, k: int) -> list[int]:
        """The PyBullet constraints of spec joint ``k`` (see the module docstring)."""
        p, c, spec, f = self.p, self.client, self.spec, self._frames
        a, b = (int(x) for x in f.bodies[k])
        # parent: a dynamic body; child: the other body, or the world (-1) for a=None
        parent, child = (b, a) if a < 0 or spec.bodies[a].fixed else (a, b)
        bp = spec.bodies[parent]
        bc = spec.bodies[child] if child >= 0 else None
        if child >= 0:
            cid_child = self.ids[child]
        else:   # PyBullet refuses constraints to the world (-1) for maximal-coordinate bodies
            if self._world is None:
                self._world = p.createMultiBody(baseMass=0.0, baseCollisionShapeIndex=-1, basePosition=[0, 0, 0],
                                                useMaximalCoordinates=True, physicsClientId=c)
            cid_child = self._world

        def frame(point, body):                        # a world point (initial pose) in a body's frame
            return list(point) if body is None else list(to_local(point, body.position, body.orientation))

        kind = f.kinds[k]
        if kind == "ball":
            points = [f.anchor[k, 0]]
        elif kind == "hinge":
            points = list(hinge_points(spec, f, k))
        else:                                          # fixed: three non-collinear points
            points = list(weld_points(spec, f, k))
        cids = [p.createConstraint(self.ids[parent], -1, cid_child, -1, p.JOINT_POINT2POINT, [0, 0, 0],
                                   frame(P, bp), frame(P, bc), physicsClientId=c) for P in points]
        for cid in cids:
            p.changeConstraint(cid, maxForce=JOINT_MAX_FORCE, physicsClientId=c)
        return cids

    def step(self) -> None:
        # timed spawns: create the bodies due at the start of this step (World.spawn's rule)
        while self._pending and self.time >= float(self.spec.bodies[self._pending[0]].spawn_time) - 1e-9:
            self._create(self._pending.pop(0))
        self.p.stepSimulation(physicsClientId=self.client)
        self.time += self.spec.dt

    def state(self):
        """All spec bodies in spec order; a body not spawned yet reports its spec pose and velocity."""
        p, c = self.p, self.client
        n = len(self.ids)
        pos = np.empty((n, 3))
        quat = np.empty((n, 4))
        lin = np.empty((n, 3))
        ang = np.empty((n, 3))
        for k, bid in enumerate(self.ids):
            if bid is None:
                b = self.spec.bodies[k]
                pos[k], quat[k], lin[k], ang[k] = b.position, b.orientation, b.linear_velocity, b.angular_velocity
                continue
            x, q = p.getBasePositionAndOrientation(bid, physicsClientId=c)
            v, w = p.getBaseVelocity(bid, physicsClientId=c)
            pos[k] = x
            quat[k] = (q[3], q[0], q[1], q[2])
            lin[k] = v
            ang[k] = w
        return pos, quat, lin, ang

    def max_penetration(self) -> float:
        pts = self.p.getContactPoints(physicsClientId=self.client)
        if not pts:
            return 0.0
        return max(0.0, -min(pt[8] for pt in pts))   # field 8: contactDistance, negative = penetration

    def close(self) -> None:
        if self.client is not None:
            self.p.disconnect(physicsClientId=self.client)
            self.client = None
