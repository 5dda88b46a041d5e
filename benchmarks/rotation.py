"""Issue 18 measurements: the rotation integrator, the impulse solver's friction and sleeping.

    PYTHONPATH=src python benchmarks/rotation.py [--quick]

1. A torque-free box 0.1 x 0.4 x 0.9 m, 10 kg, spun at w = (0.1, 5, 0.1) rad/s (near its intermediate
   axis) for 10 s at 60 Hz under every solver and both rotation integrators: the largest relative
   change of the world angular momentum, the largest relative rise of the kinetic energy, and the
   flips of the body-frame w_y against Euler's equations (scipy RK45, rtol 1e-10).
2. The integration kernels' cost per spinning body (velocities + positions, 1000 bodies), and whole
   steps of library scenes with either integrator (interleaved, best of 5).
3. impulse: a 10 cm box on a 30 deg slope, mu 0.2, 240 Hz: distance slid in 1 s against the closed
   form g (sin th - mu cos th) / 2, for both kinetic friction directions.
4. impulse: a chain of 2 x 10 x 20 cm dominoes 12 cm apart, the first tilted 10 deg, run for
   1 + 0.12 n s: how many fall, with and without the support test, and with sleeping off.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

import tumble as tb
from tumble._core.dynamics.integrate import integrate_positions, integrate_positions_midpoint, integrate_velocities
from tumble._core.math3d import quat_from_axis_angle, quat_to_matrix_py

HALF = (0.05, 0.2, 0.45)
MASS = 10.0
I_BODY = np.diag([MASS / 3 * (HALF[1] ** 2 + HALF[2] ** 2), MASS / 3 * (HALF[0] ** 2 + HALF[2] ** 2),
                  MASS / 3 * (HALF[0] ** 2 + HALF[1] ** 2)])


def reference_flips(w0, T):
    inv = 1.0 / np.diag(I_BODY)
    sol = solve_ivp(lambda t, L: np.cross(L, L * inv), (0.0, T), I_BODY @ w0, rtol=1e-10, atol=1e-12,
                    dense_output=True)
    wy = sol.sol(np.arange(0.0, T, 1e-3))[1]
    return int(np.sum(np.sign(wy[1:]) != np.sign(wy[:-1])))


def spin(solver, integrator, dt=1 / 60, T=10.0, w0=(0.1, 5.0, 0.1)):
    w = tb.World(solver=solver, gravity=(0.0, 0.0, 0.0), rotation_integrator=integrator)
    b = w.add_body(tb.Box(HALF), mass=MASS, angular_velocity=w0)

    def state():
        R = quat_to_matrix_py(w.orientation(b))
        om = w.angular_velocity(b)
        Iw = R @ I_BODY @ R.T
        return Iw @ om, 0.5 * om @ Iw @ om, (R.T @ om)[1]

    L0, E0, wy = state()
    dl = de = 0.0
    flips = 0
    for _ in range(int(round(T / dt))):
        w.step(dt)
        L, E, wy1 = state()
        dl = max(dl, np.linalg.norm(L - L0) / np.linalg.norm(L0))
        de = max(de, (E - E0) / E0)
        flips += int(np.sign(wy1) != np.sign(wy))
        wy = wy1
    return dl, de, flips


def kernel_cost(n=1000, reps=200):
    rng = np.random.default_rng(0)
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    w0 = rng.normal(size=(n, 3)) * 5.0
    I = np.zeros((n, 3, 3))
    I[:, 0, 0], I[:, 1, 1], I[:, 2, 2] = 0.8, 0.68, 0.14
    Iinv = np.linalg.inv(I)
    v, x, f, g = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3)), np.zeros(3)
    fixed, im = np.zeros(n, bool), np.ones(n)
    best = {}
    for name in ("euler", "midpoint") * 3:
        qq, ww = q.copy(), w0.copy()
        t0 = time.perf_counter()
        for _ in range(reps):
            integrate_velocities(v, ww, qq, im, I, Iinv, f, f, fixed, n, g, 1 / 60, name == "euler", 0.0, 0.0)
            if name == "euler":
                integrate_positions(x, qq, v, ww, fixed, n, 1 / 60)
            else:
                integrate_positions_midpoint(x, qq, v, ww, I, Iinv, fixed, n, 1 / 60)
        best[name] = min(best.get(name, math.inf), (time.perf_counter() - t0) / reps / n * 1e9)
    return best


def step_cost(make, integrator, steps, dt):
    w = make()
    w.settings.update(rotation_integrator=integrator)
    for _ in range(10):
        w.step(dt)
    t0 = time.perf_counter()
    for _ in range(steps):
        w.step(dt)
    return (time.perf_counter() - t0) / steps * 1e6


def scene_costs():
    def box(solver):
        w = tb.World(solver=solver, gravity=(0.0, 0.0, 0.0))
        w.add_body(tb.Box(HALF), mass=MASS, angular_velocity=(0.1, 5.0, 0.1))
        return w

    cases = [(f"spinning box {s}", (lambda s=s: box(s)), 300, 1 / 60) for s in ("pgs", "shock", "impulse")]
    for name, solver in (("stack10", "pgs"), ("ball_grid125", "pgs"), ("chain50", "pgs"), ("box_stack25", "impulse"),
                         ("stack10", "shock")):
        spec = tb.scenes.spec(name)
        cases.append((f"{name} {solver}", (lambda spec=spec, solver=solver: spec.build(solver=solver)), 100, spec.dt))
    for name, make, steps, dt in cases:
        best = {"euler": math.inf, "midpoint": math.inf}
        for _ in range(5):
            for integrator in best:
                best[integrator] = min(best[integrator], step_cost(make, integrator, steps, dt))
        e, m = best["euler"], best["midpoint"]
        print(f"{name:22s} us/step euler {e:8.1f} midpoint {m:8.1f} ({100 * (m / e - 1):+5.1f} %)")


def slope(direction):
    th = math.radians(30.0)
    q = quat_from_axis_angle((0, 1, 0), th)
    normal = (math.sin(th), 0.0, math.cos(th))
    mat = tb.Material(friction=0.2, restitution=0.0)
    w = tb.World(gravity=(0.0, 0.0, -10.0), solver="impulse", gravity_damping=0.0,
                 kinetic_friction_direction=direction)
    w.add_body(tb.Plane(normal=normal), fixed=True, material=mat)
    b = w.add_body(tb.Box((0.05, 0.05, 0.05)), position=(0.05 * normal[0], 0.0, 0.05 * normal[2]),
                   orientation=tuple(q), material=mat)
    x0 = w.position(b).copy()
    w.run(1.0, 1 / 240)
    return float(np.linalg.norm(w.position(b) - x0))


def dominoes(n, **settings):
    half = (0.01, 0.05, 0.1)
    w = tb.World(solver="impulse", **settings)
    w.add_body(tb.Plane(), fixed=True)
    ids = []
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * half
    for k in range(n):
        q = quat_from_axis_angle((0, 1, 0), math.radians(10.0 if k == 0 else 0.0))
        z = -(corners @ quat_to_matrix_py(q).T)[:, 2].min()
        ids.append(w.add_body(tb.Box(half), position=(0.12 * k, 0.0, z), orientation=tuple(q), mass=0.1))
    w.run(1.0 + 0.12 * n, 1 / 240)
    return sum(abs(quat_to_matrix_py(w.orientation(i))[2, 2]) < math.cos(math.radians(45.0)) for i in ids)


def main():
    quick = "--quick" in sys.argv
    print(f"exact motion: {reference_flips(np.array([0.1, 5.0, 0.1]), 10.0)} flips of w_y in 10 s")
    for solver in ("pgs", "shock", "jacobi", "impulse"):
        for integrator in ("euler", "midpoint"):
            dl, de, flips = spin(solver, integrator)
            print(f"{solver:8s} {integrator:9s} max |dL|/|L| {dl:.2e}  max KE rise {de:+.1e}  flips {flips}")
    cost = kernel_cost()
    print(f"integration kernels per spinning body: euler {cost['euler']:.0f} ns, midpoint {cost['midpoint']:.0f} ns")
    scene_costs()
    closed = 0.5 * 10.0 * (math.sin(math.radians(30)) - 0.2 * math.cos(math.radians(30)))
    print(f"slope 30 deg mu 0.2, 1 s: closed form {closed:.3f} m, static {slope('static'):.3f} m, "
          f"slip {slope('slip'):.3f} m")
    n = 12 if quick else 96
    for label, kw in (("Alg. 5 alone", {"sleep_requires_support": False}), ("support test", {}),
                      ("sleeping off", {"sleep_threshold": 0.0})):
        print(f"{n} dominoes, {label}: {dominoes(n, **kw)} fell")


if __name__ == "__main__":
    main()
