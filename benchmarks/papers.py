"""Issue 21: one table per paper (000 Erleben, 001 Catto, 002 Gauss' principle, 003 Liesenfeld & Stolfi,
004 Schornbaum): every figure or claim we checked, the paper's number, ours, a verdict and the command
that reproduces the row.

    python benchmarks/papers.py                    # all five papers (~55 min on 2 cores under load; 000: 39)
    python benchmarks/papers.py --papers 001       # one paper
    python benchmarks/papers.py --quick            # smoke test (fewer starts, shorter runs)
    python benchmarks/papers.py --papers 000 --rows splitting   # 000 §3-3.2 alone (~2 min)

Writes ``benchmarks/results/<machine>/paper_000.md`` ... ``paper_004.md`` (one per paper) and
``papers.json``. Rows marked "(cited)" are not re-run here: they quote a committed result file or a
test of this repository and name the command that produced it (those experiments take minutes).
Everything else is measured by this script on the committed code.
"""

from __future__ import annotations

import json
import math
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import (  # noqa: E402
    benchmark_arguments,
    cpu_mark,
    log,
    md_table,
    other_cores,
    run_meta,
    setup_lines,
    start_run,
    write_json,
)

import tumble as tb  # noqa: E402
from tumble.scenes.metrics import SceneMetrics  # noqa: E402

SCRIPT = "benchmarks/papers.py"
RESULTS = "benchmarks/results/local-2core-amd-epyc"


def cmd(paper: str, extra: str = "") -> str:
    """The command that reproduces a measured row."""
    return f"`python {SCRIPT} --papers {paper}{extra}`"


def rate_verdict(hits: int, n: int) -> str:
    """all of n starts: reproduces; at least half: partly; fewer: does not."""
    return "reproduces" if hits == n else ("partly" if 2 * hits >= n else "does not")


def row(claim: str, paper: str, ours: str, verdict: str, command: str) -> dict:
    cells = {"claim": claim, "paper": paper, "ours": ours, "verdict": verdict, "command": command}
    return {k: v.replace("|", "\\|") for k, v in cells.items()}  # a bar inside a cell would end it


def run_scene(name: str, seconds: float, solver: str = "pgs", settings: dict | None = None, **params):
    """Step scene ``name`` for ``seconds`` of its own dt; (world, SceneMetrics.result(), ms per step)."""
    spec = tb.scenes.spec(name, **params)
    w = spec.build(solver=solver, **(settings or {}))
    m = SceneMetrics(spec)
    m.observe(w)
    n = int(round(seconds / spec.dt))
    t = 0.0
    for _ in range(n):
        t0 = time.perf_counter()
        w.step(spec.dt)
        t += time.perf_counter() - t0
        m.observe(w)
    return w, m.result(), 1e3 * t / max(n, 1)


# ================================================================================================
# 001 Catto

BOX_H = 0.35  # Table 1 box height [m]


def catto_gaps(quick: bool) -> list[float]:
    """Perturbed starts: the initial separation (10 units = 3.5 cm) scaled by 0.8 ... 1.2."""
    scales = (0.9, 1.0, 1.1) if quick else (0.8, 0.9, 1.0, 1.1, 1.2)
    return [0.035 * s for s in scales]


def mass_ratio_stands(ratio: float, gap: float, settings: dict, seconds: float) -> tuple[bool, dict]:
    _, r, _ = run_scene("mass_ratio", seconds, settings=settings, ratio=ratio, gap=gap)
    ok = bool(r["standing"]) and r["max_drift"] < 0.5 * BOX_H
    return ok, r


def bisect_ratio(gap: float, settings: dict, seconds: float, steps: int) -> tuple[float, float, list]:
    """Smallest density ratio at which the heavy-on-light stack stands, bisected in log space between
    1e-3 (falls) and 1 (stands). Returns (lo, hi, probes): lo falls, hi stands."""
    lo, hi = 1e-3, 1.0
    probes = []
    ok_lo, _ = mass_ratio_stands(lo, gap, settings, seconds)
    probes.append((lo, ok_lo))
    if ok_lo:
        return 0.0, lo, probes
    for _ in range(steps):
        mid = math.sqrt(lo * hi)
        ok, _ = mass_ratio_stands(mid, gap, settings, seconds)
        probes.append((mid, ok))
        if ok:
            hi = mid
        else:
            lo = mid
    return lo, hi, probes


# --- issue 21 (h-papers): 001 §4.2, the Baumgarte stabilisation and its stable range

def baumgarte_joint_errors(beta_dt: float, c0: float = 0.01, steps: int = 8, dt: float = 1.0 / 60.0) -> np.ndarray:
    """001 §4.2's own example: a body whose centre of mass is held at the point p by a ball joint
    (J = identity), no gravity, started ``c0`` [m] off p; Catto's plain scheme (preset catto without
    relax sweeps) with Baumgarte joint feedback beta dt = ``beta_dt``. |x - p| after each step."""
    st = {**tb.PGSSettings.preset("catto"), "relax_iterations": 0, "joint_correction": "baumgarte",
          "joint_baumgarte": beta_dt}
    w = tb.World(gravity=(0.0, 0.0, 0.0), solver="pgs", **st)
    b = w.add_body(tb.Sphere(0.1), position=(0.0, 0.0, 0.0), mass=1.0)
    w.add_joint(tb.Ball(None, b, (0.0, 0.0, 0.0)))
    w.set_position(b, (0.8 * c0, 0.6 * c0, 0.0))
    out = [c0]
    for _ in range(steps):
        w.step(dt)
        out.append(float(np.linalg.norm(w.position(b))))
    return np.array(out)


def baumgarte_contact_depths(beta_dt: float, d0: float = 0.01, steps: int = 4,
                             dt: float = 1.0 / 60.0) -> tuple[np.ndarray, float]:
    """The same feedback on a contact (eq. 20 on the normal row): a 0.5 m box started ``d0`` [m] into a
    fixed ground box, no gravity, slop 0, Catto's plain scheme with baumgarte = ``beta_dt``. Returns the
    overlap after each step (negative: separated) and the box's final upward speed [m/s]."""
    st = {**tb.PGSSettings.preset("catto"), "relax_iterations": 0, "baumgarte": beta_dt, "slop": 0.0}
    w = tb.World(gravity=(0.0, 0.0, 0.0), solver="pgs", **st)
    w.add_body(tb.Box((2.0, 2.0, 0.5)), position=(0.0, 0.0, -0.5), fixed=True)
    b = w.add_body(tb.Box((0.25, 0.25, 0.25)), position=(0.0, 0.0, 0.25 - d0), mass=10.0)
    out = [d0]
    for _ in range(steps):
        w.step(dt)
        out.append(0.25 - float(w.position(b)[2]))
    return np.array(out), float(w.linear_velocity(b)[2])


def catto_baumgarte_rows() -> tuple[list[dict], list[str]]:
    rows = []
    betas = (0.1, 0.2, 0.5, 0.9, 1.0)
    cells, worst, mono = [], 0.0, True
    for bd in betas:
        c = baumgarte_joint_errors(bd)
        pred = 0.01 * (1.0 - bd) ** np.arange(len(c))
        err = float(np.abs(c - pred).max() / 0.01)
        worst = max(worst, err)
        mono &= bool(np.all(np.diff(c) <= 1e-15))
        k = min(3, len(c) - 1)
        cells.append(f"beta dt {bd:g}: |C| after 1, 2, 3 steps {', '.join(f'{1e3 * x:.4g}' for x in c[1:k + 1])} mm "
                     f"(predicted {', '.join(f'{1e3 * x:.4g}' for x in pred[1:k + 1])})")
        log(f"001 baumgarte joint {bd}: {c}")
    ok = worst < 1e-6 and mono
    rows.append(row("§4.2: Baumgarte feedback J V = -beta C (eq. 20) on a point constraint (the paper's example: "
                    "centre of mass held at p by a ball joint, no gravity, C0 = 1 cm, dt 1/60, plain scheme, "
                    "joint_correction baumgarte): C after k steps = (1 - beta dt)^k C0, smooth for beta dt <= 1",
                    "C(k dt) = (1 - dt beta)^k C(0); smooth decay for 0 < beta <= 1/dt",
                    "; ".join(cells) + f"; largest deviation from (1 - beta dt)^k over {len(c) - 1} steps "
                    f"{worst:.2g} C0; monotone: {'yes' if mono else 'no'}",
                    ("reproduces" if ok else "does not") + f" (deviation {worst:.2g} C0)", cmd("001")))
    try:
        tb.World(solver="pgs", baumgarte=1.5)
        refused = "accepted"
    except tb.TumbleError as e:
        refused = f"refused: {e}"
    rows.append(row("§4.2: 1/dt < beta < 2/dt decays with oscillation, beta >= 2/dt diverges",
                    "stable iff 0 < beta < 2/dt; use beta <= 1/dt", f"baumgarte = 1.5 (beta dt): {refused}",
                    "not comparable (tumble's settings keep beta dt in [0, 1], the paper's recommended smooth range; "
                    "the oscillating and divergent ranges cannot be set)" if refused != "accepted" else
                    "not run", cmd("001")))
    cells, first = [], []
    for bd in (0.1, 0.2, 0.5, 1.0):
        d, vz = baumgarte_contact_depths(bd)
        first.append(abs(d[1] - 0.01 * (1.0 - bd)) < 1e-6)     # 1 um
        cells.append(f"beta dt {bd:g}: overlap {', '.join(f'{1e3 * x:.3g}' for x in d)} mm, leaves at "
                     f"{vz:.3g} m/s (beta d0 / dt = {bd * 0.01 * 60:.3g})")
        log(f"001 baumgarte contact {bd}: {d} {vz}")
    rows.append(row("§4.2 on a contact (eq. 20 on the normal row, 0 <= lambda_n): a box started 1 cm into the ground, "
                    "no gravity, slop 0, plain scheme, dt 1/60",
                    "overlap decays as (1 - beta dt)^k (the analysis is for an equality constraint)",
                    "; ".join(cells),
                    ("partly" if all(first) else "does not") + " (the first step removes beta dt of the overlap "
                    "(within 1 um), then the box keeps the push-out velocity beta d0 / dt -- a contact row cannot "
                    "pull it back -- and flies off: the overlap falls linearly and turns into a gap; Baumgarte's "
                    "known energy gain)", cmd("001")))
    notes = ["§4.2 rows: `baumgarte_joint_errors` / `baumgarte_contact_depths` in papers.py; Catto's plain scheme "
             "(preset catto, relax_iterations 0). With C0 = 1 cm the push-out speed stays below "
             "max_correction_speed (4 m/s) and split_speed (1 m/s), so neither cap acts."]
    return rows, notes


def paper_001(quick: bool) -> tuple[list[dict], list[str]]:
    rows, notes = [], []
    gaps = catto_gaps(quick)
    # Catto's scheme: one PGS solve with Baumgarte, no relax pass (the catto preset without its relax sweeps)
    plain = {**tb.PGSSettings.preset("catto"), "relax_iterations": 0}
    tumble_default = {}                       # tumble's pgs defaults: substeps, manifold block solve, relax
    gap_txt = ", ".join(f"{g * 100:.2f}" for g in gaps)
    notes.append(f"Perturbed starts: initial separation {gap_txt} cm (Table 1: 10 units = 3.5 cm, scaled "
                 f"0.8-1.2). Scene settings (`tumble.scenes` `stack10`, `stack3_nocache`, `mass_ratio`): 10 PGS "
                 "sweeps, beta dt = 0.05, mu 0.2, fixed friction bound mu m g (001 eq. 24-25), no gyroscopic term, "
                 "dt 1/60 s, slop 1 mm. **Catto's plain scheme** = `relax_iterations=0` (no relax pass after "
                 "the position update), from preset catto (the single-solve scheme); tumble's pgs defaults (4 "
                 "substeps of 2 sweeps + 1 relax sweep, manifold block solve, warm start by distance) are the "
                 "second configuration.")
    stack_s = 10.0 if quick else 30.0

    # --- Fig. 6: ten boxes with caching; the last two configurations diagnose the plain scheme's failures
    configs = (("plain (relax 0)", plain), ("plain, slop 0", {**plain, "slop": 0.0}),
               ("tumble pgs (defaults)", tumble_default),
               ("diagnosis: plain, 30 sweeps", {**plain, "iterations": 30}),
               ("diagnosis: plain, beta dt 0.02", {**plain, "baumgarte": 0.02}))
    fig6 = {}
    for label, st in configs:
        res = []
        for g in gaps:
            w, r, ms = run_scene("stack10", stack_s, settings=st, gap=g)
            res.append((r["standing"], r["max_drift"], w.kinetic_energy(), ms))
            log(f"001 stack10 {label} gap {g:.4f}: standing {r['standing']} drift {r['max_drift']:.3f}")
        fig6[label] = res
    n30 = sum(1 for s, *_ in fig6["diagnosis: plain, 30 sweeps"] if s)
    nb = sum(1 for s, *_ in fig6["diagnosis: plain, beta dt 0.02"] if s)
    for label, _ in configs:
        res = fig6[label]
        n_ok = sum(1 for s, *_ in res if s)
        drifts = ", ".join(f"{d:.2f}" for _, d, _, _ in res)
        ke = max(k for *_, k, _ in res)
        verdict = rate_verdict(n_ok, len(res)) + f" ({n_ok}/{len(res)} stand)"
        if label.startswith("plain") and n_ok < len(res):
            verdict += (f"; believed cause: 10 sweeps leave the ten-box solve too inexact -- with 30 sweeps "
                        f"{n30}/{len(res)} stand, with half the Baumgarte factor {nb}/{len(res)}")
        if label.startswith("diagnosis"):
            verdict = f"{n_ok}/{len(res)} stand (not a paper setting)"
        rows.append(row(f"Fig. 6: 10-box stack with caching stands, motionless ({label}, {stack_s:.0f} s)",
                        "stable; teeters, then motionless within a few s",
                        f"stands {n_ok}/{len(res)}; max drift [m] {drifts}; max final KE {ke:.3g} J",
                        verdict, cmd("001")))

    # --- Fig. 5: three boxes without caching fall
    for label, st in (("plain (relax 0)", plain), ("tumble pgs (defaults)", tumble_default)):
        res = []
        for g in gaps:
            _, r, _ = run_scene("stack3_nocache", stack_s, settings=st, gap=g)
            res.append((r["standing"], r["max_drift"]))
        fell = sum(1 for s, _ in res if not s)
        slid = sum(1 for _, d in res if d > 0.05)
        drifts = ", ".join(f"{d:.2f}" for _, d in res)
        verdict = rate_verdict(fell, len(res)) + f" ({fell}/{len(res)} fall, {slid}/{len(res)} slide > 5 cm)"
        rows.append(row(f"Fig. 5: 3-box stack without caching slides and falls ({label}, {stack_s:.0f} s)",
                        "slides and falls", f"falls {fell}/{len(res)}; max drift [m] {drifts}", verdict, cmd("001")))

    # --- §9.2: mass-ratio threshold by bisection
    mr_s = 10.0 if quick else 20.0
    steps = 5 if quick else 8
    for label, st in (("plain (relax 0)", plain), ("tumble pgs (defaults)", tumble_default)):
        ths = []
        for g in gaps:
            lo, hi, probes = bisect_ratio(g, st, mr_s, steps)
            ths.append((lo, hi))
            log(f"001 mass_ratio {label} gap {g:.4f}: threshold in ({lo:.4f}, {hi:.4f}]")
        # monotonicity spot check: does every start stand at 3 % and fall at 1 %?
        at3 = sum(mass_ratio_stands(0.03, g, st, mr_s)[0] for g in gaps)
        at1 = sum(mass_ratio_stands(0.01, g, st, mr_s)[0] for g in gaps)
        his = [h for _, h in ths]
        rng = ", ".join(f"{100 * lo:.2g}-{100 * hi:.2g}" for lo, hi in ths)
        med = float(np.median(his))
        # within a factor 1.5 of Catto's 3 %: reproduces; between 1 % and 5 %: partly
        verdict = ("reproduces" if 0.02 <= med <= 0.045 else ("partly" if 0.01 < med <= 0.05 else "does not")) + \
            f" (median threshold {100 * med:.2g} % vs 3 %)"
        rows.append(row(f"§9.2: heavy box on light box, caching: lowest stable density ratio, bisection "
                        f"({label}, {mr_s:.0f} s, {steps} halvings in log ratio)",
                        "stable down to 3 %; below it the top box bounces and slides off",
                        f"threshold bracket [%] per start: {rng}; stands at 3 %: {at3}/{len(gaps)}; "
                        f"stands at 1 %: {at1}/{len(gaps)}", verdict, cmd("001")))

    # --- §9.2 1 % without caching sinks in; light on heavy always stable
    for label, st in (("plain (relax 0)", plain),):
        pens = []
        for g in gaps:
            _, r, _ = run_scene("mass_ratio", mr_s, settings={**st, "warm_start": False}, ratio=0.01, gap=g)
            pens.append(r["max_penetration"])
        sunk = sum(1 for p in pens if p > 0.5 * BOX_H)
        rows.append(row(f"Fig. 7: 1 % ratio without caching: the top box sinks into the light one ({label})",
                        "sinks in", f"max penetration [m] {', '.join(f'{p:.2f}' for p in pens)} "
                        f"(box height 0.35); > half the box in {sunk}/{len(gaps)}",
                        rate_verdict(sunk, len(gaps)) + f" ({sunk}/{len(gaps)})", cmd("001")))
        ok, worst = 0, 0.0
        n = 0
        for ratio in (0.01, 0.03, 0.3):
            for ws in (True, False):
                for g in gaps[:3]:
                    _, r, _ = run_scene("mass_ratio", 10.0, settings={**st, "warm_start": ws}, ratio=ratio,
                                        heavy_on_top=False, gap=g)
                    n += 1
                    good = bool(r["standing"]) and r["max_drift"] < 0.01
                    ok += good
                    worst = max(worst, r["max_drift"])
        rows.append(row(f"§9.2: light box on heavy box stable with and without caching ({label}; ratios 1, 3, "
                        "30 %, 10 s)", "completely stable", f"stands with drift < 1 cm in {ok}/{n} runs; "
                        f"worst drift {worst * 1e3:.2g} mm",
                        ("reproduces" if ok == n else "partly") + f" ({ok}/{n})", cmd("001")))

    r42, n42 = catto_baumgarte_rows()
    rows += r42
    notes += n42

    # --- cited: the existing tests (tumble's default pgs, 3 starts)
    rows.append(row("Fig. 6 / Fig. 5 / §9.2 with preset catto (one solve + 2 relax sweeps), 3 starts (cited: tests)",
                    "10 stand; 3 without caching fall; 3 % stands, 1 % falls; 1 % no caching sinks",
                    "see `tests/papers/test_catto_001.py` docstring: stack10 stands 3/3 (drift 0.04-0.11 m); "
                    "stack3 no caching falls 2/3; 3 % stands, 1 % falls; 1 % no caching: penetration 0.41 m",
                    "reproduces, Fig. 5 partly (2/3 fall)",
                    "`pytest tests/papers/test_catto_001.py -m 'slow or not slow'`"))
    return rows, notes


# ================================================================================================
# 000 Erleben

def dense_rows(w) -> tuple[np.ndarray, np.ndarray]:
    """J and B = M^-1 J^T of the rows the last step solved (``w._core.rows``: row_body and the two
    bodies' 6-blocks row_J, row_B) as dense (rows, 6 bodies) arrays."""
    r = w._core.rows
    s = r.count
    nb = w._core.bodies.count
    J = np.zeros((s, 6 * nb))
    B = np.zeros((s, 6 * nb))
    for i in range(s):
        for k in range(2):
            b = r.row_body[i, k]
            if b >= 0:
                J[i, 6 * b:6 * b + 6] += r.row_J[i, k]
                B[i, 6 * b:6 * b + 6] += r.row_B[i, k]
    return J, B


def system_matrices(w) -> tuple[np.ndarray, np.ndarray]:
    """A = J M^-1 J^T of the rows the last step solved as a dense array, and the row kinds."""
    J, B = dense_rows(w)
    return J @ B.T, w._core.rows.row_kind[:J.shape[0]].copy()


def first_step_lcp(name: str, params: dict) -> dict:
    """The boxed LCP of a scene's first step (000 eq. 27): the rows pgs built (``w._core.rows``),
    A = J M^-1 J^T, b = J V_pred - zeta with V_pred = V0 + dt M^-1 f_ext (the scenes start at rest, so
    no gyroscopic term), bounds lo/hi, friction link and mu (friction bounds +-mu lambda_n, eq. 29).
    Returns {"lcp": BoxedLCP, "B": M^-1 J^T as (rows, 6 nb), "vp": V_pred (6 nb,), "mass", "inertia"
    (world, per body), "dt", "bodies"}."""
    from benchmarks.lcp_splitting import BoxedLCP

    spec = tb.scenes.spec(name, **params)
    w = spec.build(solver="pgs")
    c = w._core
    bd = c.bodies
    nb = bd.count
    v0 = np.concatenate([bd.body_linear_velocity[:nb], bd.body_angular_velocity[:nb]], axis=1).copy()
    w.step(spec.dt)
    r = c.rows
    s = r.count
    J, B = dense_rows(w)
    dyn = ~bd.body_fixed[:nb]
    acc = np.zeros((nb, 6))
    acc[dyn, :3] = np.asarray(c.gravity) + bd.body_force[:nb][dyn] * bd.body_inv_mass[:nb][dyn, None]
    vp = (v0 + spec.dt * acc) * dyn[:, None]
    vp = vp.reshape(-1)
    inertia = np.zeros((nb, 3, 3))
    for i in np.flatnonzero(dyn):
        inertia[i] = np.linalg.inv(bd.body_inv_inertia_world[i])
    lcp = BoxedLCP(J @ B.T, J @ vp - r.row_bias[:s], r.row_lo[:s], r.row_hi[:s], r.row_link[:s], r.row_mu[:s])
    return {"lcp": lcp, "B": B, "vp": vp, "mass": bd.body_mass[:nb] * dyn, "inertia": inertia, "dt": spec.dt,
            "bodies": int(dyn.sum())}


def gs_iteration_eigs(A: np.ndarray, gamma: float = 0.0) -> np.ndarray:
    """Eigenvalues of the Gauss-Seidel iteration matrix T = -(D + L)^-1 U of A + gamma I (000 eq. 35)."""
    Ag = A + gamma * np.eye(len(A))
    DL = np.tril(Ag)
    U = np.triu(Ag, 1)
    import scipy.linalg as sl
    T = -sl.solve_triangular(DL, U, lower=True)
    return np.linalg.eigvals(T)


def spectral(name: str, solver: str, params: dict, gammas=(0.0,)) -> dict:
    spec = tb.scenes.spec(name, **params)
    w = spec.build(solver=solver)
    w.step(spec.dt)
    A, kinds = system_matrices(w)
    ev = np.linalg.eigvalsh(0.5 * (A + A.T))
    amax = float(ev.max())
    out = {"rows": len(A), "bodies": w.body_count - 1, "eig_max": amax,
           "null_frac": float(np.mean(ev < 1e-9 * amax)),
           "eig_min_pos": float(ev[ev >= 1e-9 * amax].min()),
           "sym_err": float(np.abs(A - A.T).max() / amax),
           "nnz_frac": float(np.mean(np.abs(A) > 1e-12 * amax))}
    for g in gammas:
        t = np.abs(gs_iteration_eigs(A, g * amax))
        out[f"rho_{g}"] = float(t.max())
        out[f"ones_{g}"] = float(np.mean(t > 1 - 1e-6))
        below = t[t <= 1 - 1e-6]
        out[f"sub_{g}"] = float(below.max()) if below.size else 0.0   # the rate on the rest of the spectrum
    return out


def fixed_sweep_cost(name: str, params: dict, steps: int) -> list[tuple[int, float, float]]:
    """(contacts, ms of the step without the collision stages, ms of the collision stages) per step, shock
    with FIXED sweep counts: tolerance 0 (every sweep of `iterations` and `correction_iterations` runs),
    block_iterations 1."""
    spec = tb.scenes.spec(name, **params)
    st = {"tolerance": 0.0, "correction_tolerance": 0.0, "block_iterations": 1}
    w = spec.build(solver="shock", **st)
    for _ in range(3):
        w.step(spec.dt)
    pts = []
    for _ in range(steps):
        w.step(spec.dt)
        p = w.profile
        coll = sum(p.get(k, 0.0) for k in ("broad", "narrow", "cache"))
        pts.append((int(w.counters["contacts"]), p["total"] - coll, coll))  # profile is in ms
    return pts


def sawtooth(dt: float, correction_slop: float, seconds: float, shape: str = "box") -> tuple[float, int]:
    """One body resting on a fixed ground box under shock, dropped from 1 cm: (peak-to-peak height over the
    last second [m], sudden drops in it). ``shape``: a 0.5 m, 125 kg box, or the scenes' cow (000 Fig. 30:
    "a single cow standing on a fixed ground"; CoACD compound of 19 hulls, standing on its legs)."""
    w = tb.World(gravity=(0.0, 0.0, -9.81), solver="shock", correction_slop=correction_slop)
    w.add_body(tb.Box((4.0, 4.0, 0.5)), position=(0.0, 0.0, -0.5), fixed=True)
    if shape == "cow":
        from tumble.scenes.nonconvex import cow_shape, load_hulls

        lowest = float(np.vstack(load_hulls())[:, 2].min())       # the hooves [m], centre of mass at 0
        b = w.add_body(cow_shape(), position=(0.0, 0.0, 0.01 - lowest), density=1000.0)
    else:
        b = w.add_body(tb.Box((0.25, 0.25, 0.25)), position=(0.0, 0.0, 0.26), mass=125.0)
    n = int(round(seconds / dt))
    zs = []
    for _ in range(n):
        w.step(dt)
        zs.append(float(w.position(b)[2]))
    z = np.array(zs[n - int(round(1.0 / dt)):])
    pp = float(z.max() - z.min())
    drops = int(np.sum(np.diff(z) < -0.25 * pp)) if pp > 1e-9 else 0
    return pp, drops


#: 000 Fig. 29's saw-tooth tooth in a body's height: a rise over at least TOOTH_STEPS steps in a row, by at
#: least TOOTH_RISE [m], followed within 3 steps by a fall of at least half of it (slow rise, sudden drop)
TOOTH_STEPS = 5
TOOTH_RISE = 1e-4


def saw_teeth(z: np.ndarray) -> tuple[int, int, list[float]]:
    """(rising runs, teeth, the teeth's rises [m]) of one body's height series ``z``."""
    d = np.diff(z)
    runs, rises = 0, []
    k = 0
    while k < len(d):
        if d[k] <= 0.0:
            k += 1
            continue
        j = k
        while j < len(d) and d[j] > 0.0:
            j += 1
        rise = float(z[j] - z[k])
        if j - k >= TOOTH_STEPS and rise >= TOOTH_RISE:
            runs += 1
            if z[j] - z[min(j + 3, len(z) - 1)] >= 0.5 * rise:
                rises.append(rise)
        k = j
    return runs, len(rises), rises


def pile_popcorn(quick: bool) -> dict:
    """000 Fig. 29: the heights (potential energy / m g) of every cow of a cow pile under shock at dt 0.01,
    over the last 3 s of an 8 s run (quick: 50 cows, 5 s): slow rising runs and saw teeth (``saw_teeth``)."""
    count, seconds = (50, 5.0) if quick else (100, 8.0)
    spec = tb.scenes.spec("cow_pile", count=count, seconds=seconds)
    w = spec.build(solver="shock")
    cows = np.array([i for i, b in enumerate(spec.bodies) if not b.fixed])
    n = int(round(spec.seconds / spec.dt))
    z = np.empty((n, cows.size))
    for k in range(n):
        w.step(spec.dt)
        z[k] = w.positions[cows, 2]
    tail = z[n - int(round(3.0 / spec.dt)):]
    counts = [saw_teeth(tail[:, c]) for c in range(cows.size)]
    rises = [r for c in counts for r in c[2]]
    return {"cows": int(cows.size), "seconds": seconds, "runs": sum(c[0] for c in counts),
            "teeth": sum(c[1] for c in counts), "cows_with_teeth": sum(1 for c in counts if c[1]),
            "largest_tooth_m": max(rises, default=0.0), "kinetic_end_j": float(w.kinetic_energy())}


# --- issue 21 (h-papers): 000 §5 results -- the tower-roof comparison (Figs. 20-23, 25, 27), worst-case frame
# times (§5, Figs. 16-17) and the collision-detection cost against contacts (Fig. 19)

FRAME = 0.01    # 000 §5: "In all of our simulations, we have used a timestep of 0.01 seconds" (one frame)
#: tiny versions that reach every spawn: run once before a timed run so no kernel compiles inside it
WARM_TOWER = {"courses": 3, "impact_time": 0.33, "cannon_time": 0.4, "seconds": 0.5}
WARM_SCENES = {"inclined_letters": {"count": 20, "seconds": 0.2},
               "falling_roof": {"courses": 3, "roof_time": 0.1, "cannon_time": 0.2, "seconds": 0.3}}


def frame_run(name: str, params: dict, solver: str, settings: dict, dt: float) -> dict:
    """Step scene ``name`` under ``solver`` at ``dt`` (a whole number of steps per 0.01 s frame) to its end:
    the wall time of every frame [ms], SceneMetrics, and for scenes with spawned projectiles (tower_roof,
    falling_roof) the deepest contact overlap between the first projectile's spawn and the second's, and
    the stack bodies' RMS and largest speed over the last second before the second spawn (the tower after
    the heavy block's impact: it should be at rest, not jitter)."""
    spec = tb.scenes.spec(name, **params)
    w = spec.build(solver=solver, **settings)
    m = SceneMetrics(spec)
    m.observe(w)
    per = int(round(FRAME / dt))
    frames = int(round(spec.seconds / FRAME))
    spawns = sorted({float(b.spawn_time) for b in spec.bodies if b.spawn_time > 0.0})
    t1, t2 = (spawns + [math.inf, math.inf])[:2]
    stack = spec.tagged("stack")
    ms = np.zeros(frames)
    pen, v2, vmax, nv = 0.0, 0.0, 0.0, 0
    for f in range(frames):
        t0 = time.perf_counter()
        for _ in range(per):
            w.step(dt)
        ms[f] = 1e3 * (time.perf_counter() - t0)
        m.observe(w)
        t = w.time
        if t1 <= t < t2:
            d = w.contacts().depth
            if d.size:
                pen = max(pen, float(d.max()))
        if t2 - 1.0 <= t < t2:
            v = np.linalg.norm(w.linear_velocities[stack], axis=1)
            v2 += float(np.sum(v * v))
            nv += len(v)
            vmax = max(vmax, float(v.max()))
    r = m.result()
    return {"ms": ms, "metrics": r, "window_pen": pen, "rms_v": math.sqrt(v2 / nv) if nv else math.nan,
            "max_v": vmax, "spawns": spawns, "bodies": len(spec.bodies)}


def tower_roof_rows(quick: bool) -> tuple[list[dict], list[str]]:
    params = ({"courses": 6, "impact_time": 1.2, "cannon_time": 2.5, "seconds": 3.5} if quick else {})
    runs = {}
    # VSP = shock (this paper), ISP-like = impulse (Schornbaum's Alg. 10 after Guendelman et al.; at 300 steps/s,
    # 3 per frame: its HP thresholds are made for >= 180 steps/s), plain PGS = pgs
    for label, solver, st, dt in (("VSP (shock)", "shock", {}, FRAME), ("PGS (pgs)", "pgs", {}, FRAME),
                                  ("impulse-based (impulse, 1/300 s)", "impulse", {}, 1.0 / 300.0)):
        frame_run("tower_roof", WARM_TOWER, solver, st, dt)     # compile / load the kernels, spawns included
        runs[label] = r = frame_run("tower_roof", params, solver, st, dt)
        log(f"000 tower_roof {label}: {r['metrics']} pen {r['window_pen']} rms {r['rms_v']} "
            f"ms mean {r['ms'].mean():.3g} max {r['ms'].max():.3g}")
    spec = tb.scenes.spec("tower_roof", **params)
    t_imp = float(spec.params["impact_time"])
    t_can = float(spec.params["cannon_time"])
    scene_txt = f"tower_roof {params or '(defaults: 800 bricks, block at 10 s, cannonball at 13 s, 16 s)'}"
    rows = []
    cells = []
    for label, r in runs.items():
        mt = r["metrics"]
        cells.append(f"{label}: before the block drift {1e3 * mt['pre_spawn_max_drift']:.3g} mm, pen. "
                     f"{1e3 * mt['pre_spawn_max_penetration']:.3g} mm; {mt['displaced']} bricks displaced at the "
                     f"end; energy gain {mt['energy_max_gain']:.3g} J")
    vsp = runs["VSP (shock)"]["metrics"]
    ok = vsp["pre_spawn_max_drift"] < 1e-3 and vsp["displaced"] > 0 and vsp["energy_max_gain"] < 1.0
    rows.append(row(f"Figs. 20-22: the tower stands still for a long time, takes the heavy block, and the cannonball "
                    f"knocks it down plausibly ({scene_txt})", "VSP: stands rigid, collapses plausibly",
                    "; ".join(cells), ("reproduces" if ok else "partly") + " for VSP (drift "
                    f"{1e3 * vsp['pre_spawn_max_drift']:.3g} mm, energy gain {vsp['energy_max_gain']:.3g} J)",
                    cmd("000")))
    cells = [f"{label}: brick speed RMS {100 * r['rms_v']:.3g} cm/s, max {100 * r['max_v']:.3g} cm/s over "
             f"{t_can - 1:g}-{t_can:g} s" for label, r in runs.items()]
    isp, vs = runs["impulse-based (impulse, 1/300 s)"], runs["VSP (shock)"]
    rows.append(row(f"Fig. 23: after the heavy block's impact the impulse-based (ISP) tower shakes and jitters, the "
                    f"VSP tower does not ({scene_txt}; the tower's last second before the cannonball)",
                    "ISP jitters, VSP stable", "; ".join(cells),
                    ("reproduces" if isp["rms_v"] > 2.0 * vs["rms_v"] else
                     ("does not" if isp["rms_v"] <= vs["rms_v"] else "partly"))
                    + f" (RMS {100 * isp['rms_v']:.3g} vs {100 * vs['rms_v']:.3g} cm/s; tumble's impulse solver is "
                    "Schornbaum's Alg. 10 with sleeping, not Guendelman's ISP)", cmd("000")))
    cells = [f"{label}: {1e3 * r['window_pen']:.3g} mm" for label, r in runs.items()]
    rows.append(row(f"Fig. 25: deepest penetration after the block's impact ({t_imp:g}-{t_can:g} s; the paper: "
                    f"frame 80, Novodex deep, VSP none) ({scene_txt})", "VSP: no visible penetration",
                    "; ".join(cells), ("reproduces" if vs["window_pen"] < 0.01 else "partly")
                    + f" (VSP {1e3 * vs['window_pen']:.3g} mm; Novodex not run, see notes)", cmd("000")))
    cells = [f"{label}: mean {r['ms'].mean():.3g} ms, worst {r['ms'].max():.3g} ms per 0.01 s frame"
             for label, r in runs.items()]
    ratio = isp["ms"].mean() / vs["ms"].mean()
    rows.append(row(f"Fig. 27 / §5.5: wall time per frame (collision detection + dynamics), ISP slower than VSP "
                    f"({scene_txt}; 1 frame = 0.01 s)", "ISP slower than VSP (15 collision queries per frame vs 2)",
                    "; ".join(cells), ("reproduces" if ratio > 1.1 else ("does not" if ratio < 0.9 else
                                                                         "partly (equal within 10 %)"))
                    + f" (impulse / shock = {ratio:.2f}x per frame, mean)", cmd("000")))
    notes = ["Tower-roof rows: the same three runs feed Figs. 20-23, 25 and 27. 'impulse-based' is tumble's "
             "`impulse` solver (Schornbaum 004: sequential impulses with Alg. 10 shock propagation, itself built on "
             "Guendelman et al.'s ISP, but with a single collision detection per step and sleeping), at 1/300 s (3 "
             "steps per frame: its high-performance thresholds need >= 180 steps/s, 004 §5.6). Novodex, ODE and "
             "Maya (Figs. 24, 26) are not run here; stacking.md compares PyBullet and MuJoCo on this scene."]
    return rows, notes


def worst_frame_rows(quick: bool) -> tuple[list[dict], list[str]]:
    """§5's worst-case frame times (engraved letters 0.18 s, falling roof 0.25 s on a 1.7 GHz CPU) and
    Fig. 16's energy behaviour, under shock at 0.01 s."""
    cases = (("inclined_letters", {"count": 200, "seconds": 2.0} if quick else {}, "Fig. 17 (engraved letters)",
              0.18),
             ("falling_roof", {"courses": 8, "roof_time": 0.5, "cannon_time": 1.5, "seconds": 2.5} if quick else {},
              "Fig. 16 (falling roof)", 0.25))
    rows = []
    for name, params, fig, paper_s in cases:
        frame_run(name, WARM_SCENES[name], "shock", {}, FRAME)
        r = frame_run(name, params, "shock", {}, FRAME)
        mt = r["metrics"]
        worst = r["ms"][1:].max()
        log(f"000 worst frame {name}: {worst:.3g} ms, metrics {mt}")
        rows.append(row(f"§5: worst-case frame time, {fig}: {name} {params or '(defaults)'}, {r['bodies']} bodies, "
                        "shock, dt 0.01", f"{paper_s} s (1.7 GHz CPU, 1 GB)",
                        f"worst {worst:.3g} ms, mean {r['ms'][1:].mean():.3g} ms per frame; energy gain "
                        f"{mt['energy_max_gain']:.3g} J"
                        + (f", {mt['displaced']} bodies displaced" if "displaced" in mt else ""),
                        ("reproduces" if worst < 1e3 * paper_s else "does not")
                        + f" (worst {worst / 1e3:.3g} s vs {paper_s} s; different CPU)", cmd("000")))
        if name == "falling_roof":
            gain = mt["energy_max_gain"]
            rows.append(row(f"Fig. 16: the roof falls onto the tower and the cannonball hits it, plausibly ({name} "
                            f"{params or '(defaults)'}, shock)", "plausible (no energy gain)",
                            f"largest energy gain over the run {gain:.3g} J (budget: kinetic + potential at the "
                            f"start plus each spawned body's); {mt['displaced']} bodies displaced",
                            "reproduces" if gain < 1.0 else f"does not (energy gain {gain:.3g} J)", cmd("000")))
    return rows, []


def fig19_row(points: list) -> dict:
    """Fig. 19 from the Fig. 18 runs (``points``: (name, params, [(contacts, ms dynamics, ms collision)]):
    collision detection time (broad + narrow + cache) against contacts, least squares on the scene
    medians."""
    mx = np.array([float(np.median([p[0] for p in pts])) for _, _, pts in points])
    my = np.array([float(np.median([p[2] for p in pts])) for _, _, pts in points])
    s, i = np.polyfit(mx, my, 1)
    r2 = 1 - np.sum((my - (s * mx + i)) ** 2) / np.sum((my - my.mean()) ** 2)
    per_c = my / np.maximum(mx, 1.0)
    return row("Fig. 19: collision detection time (broad + narrow + cache, both detections of a shock step) no "
               "worse than linear in the number of contacts (the Fig. 18 runs)", "no worse than linear",
               f"{len(points)} scenes, {int(mx.min())}-{int(mx.max())} contacts (medians): {1e3 * s:.3g} us/contact + "
               f"{i:.3g} ms, R^2 = {r2:.3f}; per contact {1e3 * per_c.min():.3g}-{1e3 * per_c.max():.3g} us",
               ("reproduces" if r2 > 0.9 else "partly") + f" (R^2 {r2:.3f} on the scene medians)", cmd("000"))


SPLIT_GAMMAS = (0.0, 1e-4, 1e-3, 1e-2)   # gamma / max diag(A) for Fig. 6
SPLIT_OMEGAS = (1.2, 1.5, 1.8)            # projected SOR


def _rate_cell(th: np.ndarray) -> str:
    """theta at the start and after the sweeps, or 'diverges'."""
    if not np.isfinite(th[-1]) or th[-1] > 1e100:
        return f"diverges (theta {th[0]:.2g} -> {th[-1]:.2g} in {len(th) - 1} sweeps)"
    return f"theta {th[0]:.2g} -> {th[-1]:.2g}"


def splitting_experiments(quick: bool) -> dict:
    """000 §3-3.2 on the first step's boxed LCP of each configuration, in NumPy (benchmarks/lcp_splitting.py):
    theta (eq. 38) per sweep of projected GS, Jacobi (omega 1 and tumble's jacobi relaxation 0.2), SOR,
    GS on the diagonally scaled system (eq. 39-40) and GS with constraint force mixing (eq. 41); the
    kinetic energy after the solve against a reference solution (GS until theta <= 1e-28 theta_0 or
    ``ref_sweeps`` sweeps)."""
    from benchmarks import lcp_splitting as ls

    sweeps = 100 if quick else 300
    ref_sweeps = 500 if quick else 3000
    configs = [("box_stack25", {"count": n}) for n in ((3, 6) if quick else (3, 6, 12, 25))]
    configs += [("ball_grid125", {"n": 3 if quick else 4})]
    if not quick:
        configs += [("wall200", {"rows": 6, "columns": 5})]
    out = {"sweeps": sweeps, "ref_sweeps": ref_sweeps, "configs": []}
    for name, params in configs:
        t0 = time.perf_counter()
        P = first_step_lcp(name, params)
        p = P["lcp"]

        def ke(lam, P=P):
            return ls.kinetic_energy(P["vp"] + P["B"].T @ lam, P["mass"], P["inertia"])

        normal = p.link < 0
        th0 = ls.merit(p, np.zeros(p.n))
        lam_ref, th_ref = ls.solve(p, "gs", ref_sweeps, stop=1e-28 * th0)
        amax = float(np.diag(p.A).max())
        c = {"name": name, "params": params, "rows": p.n, "bodies": P["bodies"], "ke_pred": ke(np.zeros(p.n)),
             "ke_ref": ke(lam_ref), "theta_ref": float(th_ref[-1]), "ref_sweeps": len(th_ref) - 1, "gs_long": th_ref,
             "diag_max": amax, "lam_ref_norm": float(np.linalg.norm(lam_ref)), "methods": {}}
        methods = [("GS", "gs", 1.0), ("Jacobi 1", "jacobi", 1.0), ("Jacobi 0.2", "jacobi", 0.2)]
        methods += [(f"SOR {om}", "gs", om) for om in SPLIT_OMEGAS]
        for label, meth, om in methods:
            kes = []
            with np.errstate(over="ignore", invalid="ignore"):
                lam, th = ls.solve(p, meth, sweeps, omega=om, on_sweep=lambda lam_k, kes=kes: kes.append(ke(lam_k)))
            kes = np.array(kes)
            w = p.A @ lam + p.b
            c["methods"][label] = {"theta": th, "ke": kes, "ke10": float(kes[min(9, len(kes) - 1)]),
                                   "ke_end": float(kes[-1]),
                                   "gain_max": float(np.nanmax(kes - max(c["ke_ref"], c["ke_pred"]))),
                                   "separating_max": float(np.nanmax(np.where(normal & (lam > 0), w, 0.0)))}
        # diagonal scaling: the same GS iterates (C lambda'), merit measured on the scaled system
        ps, cs = p.scaled()
        lam_s, th_s = ls.solve(ps, "gs", sweeps)
        lam_g, _ = ls.solve(p, "gs", sweeps)
        c["scaled"] = {"theta": th_s, "iterate_diff": float(np.abs(cs * lam_s - lam_g).max()
                                                            / max(np.abs(lam_g).max(), 1e-300))}
        # constraint force mixing: theta of the damped problem and of the undamped one at its iterates
        c["gamma"] = {}
        for g in SPLIT_GAMMAS[1:]:
            pd = p.damped(g * amax)
            _, th_u = ls.solve(pd, "gs", sweeps, measure=p)
            lam_dr, th_dr = ls.solve(pd, "gs", ref_sweeps, stop=1e-28 * th0)   # the damped problem's solution
            wd = p.A @ lam_dr + p.b
            c["gamma"][g] = {"theta": th_dr[:sweeps + 1], "theta_undamped": th_u, "long": th_dr,
                             "ke_solution": ke(lam_dr),
                             "lam_norm": float(np.linalg.norm(lam_dr)),
                             "sink_max": float(max(0.0, -np.min(np.where(normal & (lam_dr > 0), wd, 0.0))))}
        c["gamma"][0.0] = {"theta": c["methods"]["GS"]["theta"], "long": th_ref, "ke_solution": c["ke_ref"],
                           "lam_norm": c["lam_ref_norm"], "sink_max": float(max(0.0, -np.min(np.where(
                               normal & (lam_ref > 0), p.A @ lam_ref + p.b, 0.0))))}
        c["seconds"] = time.perf_counter() - t0
        log(f"000 splitting {name} {params}: rows {p.n}, {c['seconds']:.0f} s")
        out["configs"].append(c)
    return out


def cfm_runs(quick: bool, amax: float) -> list[tuple[int, float, dict, float]]:
    """Fig. 7 in a real run: box_stack25 under plain projected Gauss-Seidel on the whole system (the shock
    solver with shock_propagation False, block_iterations 1, tolerance 0: the paper's solver without shock
    propagation; pgs has no constraint force mixing setting) with cfm = gamma max diag(A), at 10 and 100
    sweeps per step. Returns (sweeps, gamma, SceneMetrics result, ms per step)."""
    secs = 1.0 if quick else 4.0
    out = []
    for it in (10, 100):
        for g in SPLIT_GAMMAS:
            st = {"shock_propagation": False, "block_iterations": 1, "tolerance": 0.0, "iterations": it,
                  "cfm": g * amax}
            _, r, ms = run_scene("box_stack25", secs, solver="shock", settings=st, count=10 if quick else 25)
            out.append((it, g, r, ms))
            log(f"000 cfm run {it} sweeps, gamma {g}: {r}")
    return out


def splitting_figure(data: dict, path: Path) -> Path:
    from benchmarks.report import pyplot, save_figure

    plt = pyplot()
    cfgs = data["configs"]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    stack = max((c for c in cfgs if c["name"] == "box_stack25"), key=lambda c: c["rows"])
    ax = axes[0, 0]
    for c in cfgs:
        th = c["gs_long"]
        lab = c["name"] + " " + " ".join(f"{k}={v}" for k, v in c["params"].items())
        ax.semilogy(np.arange(len(th)), th, label=lab)
    ax.set_title("Fig. 5: projected GS, theta per sweep (first step, cold start)")
    ax2 = axes[0, 1]
    for lab, m in stack["methods"].items():
        th = np.where(m["theta"] > 1e12, np.nan, m["theta"])
        ax2.semilogy(np.arange(len(th)), th, label=lab)
    ax2.semilogy(np.arange(len(stack["scaled"]["theta"])), stack["scaled"]["theta"], "k--",
                 label="GS, diagonally scaled (eq. 39-40)")
    ax2.set_title(f"§3: methods, box_stack25 n={stack['params']['count']} (Jacobi 1 cut at theta 1e12)")
    ax3 = axes[1, 0]
    for g in SPLIT_GAMMAS:
        th = stack["gamma"][g]["long"]
        ax3.semilogy(np.arange(len(th)), th, label=f"gamma = {g:g} max diag(A)")
    ax3.set_title(f"Fig. 6: GS with constraint force mixing, box_stack25 n={stack['params']['count']}")
    ax4 = axes[1, 1]
    for lab, m in stack["methods"].items():
        if lab.startswith("Jacobi 1"):
            continue
        ax4.plot(np.arange(1, len(m["ke"]) + 1), m["ke"], label=lab)
    ax4.axhline(stack["ke_ref"], color="k", ls=":", label="reference solution")
    ax4.set_title("§3: kinetic energy after k sweeps [J] (same stack)")
    for a in (ax, ax2, ax3, ax4):
        a.set_xlabel("sweep k")
        a.legend(fontsize=7)
    for a in (ax, ax2, ax3):
        a.set_ylabel("theta (eq. 38)")
    return save_figure(fig, path)


def splitting_rows(quick: bool, figure_dir: Path | None = None) -> tuple[list[dict], list[str]]:
    """The rows of 000 §3-3.2 (Figs. 5-7, eq. 39-41; issue 21)."""
    data = splitting_experiments(quick)
    cfgs = data["configs"]
    sweeps = data["sweeps"]
    rows, notes = [], []

    def lab(c):
        return c["name"] + " " + ",".join(f"{k}={v}" for k, v in c["params"].items())

    from benchmarks.lcp_splitting import linear_rate

    def knee(th, rate):
        """The first sweep after which theta follows its asymptotic line within a factor 3 to the end."""
        k = np.arange(len(th))
        tail = k >= len(th) // 2
        a = np.median(np.log(th[tail]) - k[tail] * np.log(rate))
        off = np.abs(np.log(th) - (a + k * np.log(rate))) > np.log(3.0)
        bad = np.flatnonzero(off)
        return int(bad[-1] + 1) if bad.size else 0

    fits = {lab(c): linear_rate(c["gs_long"], skip=0.5) for c in cfgs}
    lin = [k for k, (r, r2) in fits.items() if r2 >= 0.99]
    rates = [r for r, _ in fits.values()]
    cells = []
    for c, (r, r2) in zip(cfgs, fits.values()):
        th = c["gs_long"]
        cells.append(f"{lab(c)}: theta {th[0]:.2g} -> {th[-1]:.2g} in {len(th) - 1} sweeps; asymptotic factor "
                     f"{r:.5f}/sweep (R^2 {r2:.4f} over the second half), on that line from sweep "
                     f"{knee(th, r)}")
    rows.append(row("Fig. 5: the log of the merit theta (eq. 37-38) of projected GS falls on a line (linear "
                    "convergence), each configuration at its own rate (first step's LCP, cold start, GS until theta "
                    f"<= 1e-28 theta_0 or {data['ref_sweeps']} sweeps; line fitted over the second half)",
                    "linear; each configuration differently", "; ".join(cells),
                    ("reproduces" if len(lin) == len(fits) else "partly") + f" ({len(lin)} of {len(fits)} "
                    f"configurations on a line with R^2 >= 0.99; factors per sweep {min(rates):.4f}-"
                    f"{max(rates):.5f}; before the line a faster drop over the first sweeps: the tall stacks reach "
                    "their slow mode only after tens to hundreds of sweeps)", cmd("000", " --rows splitting")))
    cells, bad = [], 0
    for c in cfgs:
        g, j1, j2 = (c["methods"][k]["theta"] for k in ("GS", "Jacobi 1", "Jacobi 0.2"))
        worse = (not np.isfinite(j1[-1]) or j1[-1] > g[-1]) and j2[-1] > g[-1]
        bad += worse
        cells.append(f"{lab(c)}: GS {_rate_cell(g)}; Jacobi omega 1 {_rate_cell(j1)}; omega 0.2 {_rate_cell(j2)}")
    rows.append(row(f"§3: the projected Jacobi method has terrible convergence (against projected GS; omega 1 and "
                    f"tumble's jacobi relaxation 0.2; {sweeps} sweeps from lambda = 0)", "terrible convergence",
                    "; ".join(cells),
                    ("reproduces" if bad == len(cfgs) else "partly") + f" (Jacobi ends above GS in {bad} of "
                    f"{len(cfgs)} configurations at both omegas)", cmd("000", " --rows splitting")))
    cells, gain = [], 0
    for c in cfgs:
        parts = []
        for om in SPLIT_OMEGAS:
            m = c["methods"][f"SOR {om}"]
            parts.append(f"SOR {om}: KE10 {m['ke10']:.3g} J, gain {max(m['gain_max'], 0.0):.3g} J, "
                         f"separating {m['separating_max']:.2g} m/s")
            gain += m["gain_max"] > 1e-3 * max(c["ke_ref"], c["ke_pred"])
        gs = c["methods"]["GS"]
        biased = c["ke_ref"] > c["ke_pred"]
        cells.append(f"{lab(c)} (KE before the solve {c['ke_pred']:.3g} J, reference solution {c['ke_ref']:.3g} J"
                     f"{', push-out targets' if biased else ''}): GS KE10 {gs['ke10']:.3g} J, gain "
                     f"{max(gs['gain_max'], 0.0):.3g} J; " + "; ".join(parts))
    nsor = len(cfgs) * len(SPLIT_OMEGAS)
    rows.append(row("§3: SOR suffers from energy gain (kinetic energy V^T M V / 2 after k sweeps, V = V_pred + "
                    "M^-1 J^T lambda_k; 'gain': its largest excess over both the energy before the solve and the "
                    "reference solution's, over the sweeps; 'separating': the largest normal velocity w > 0 of a "
                    f"loaded contact after {sweeps} sweeps)", "energy gain", "; ".join(cells),
                    ("reproduces" if gain == nsor else "partly" if gain else "does not") + f" (gain in {gain} of "
                    f"{nsor} SOR runs, all where the targets push overlaps out (zeta > 0): overrelaxation overshoots "
                    "the push-out. Where zeta = 0 (the resting stacks, the wall) KE(lambda) = KE_pred + lambda^T b + "
                    "lambda^T A lambda / 2, which every projected SOR row step with 0 < omega < 2 lowers while the "
                    "bounds stay put; the friction coupling (eq. 29) can break that (tests/unit/test_lcp_splitting.py"
                    ", omega 1.9), but did not here: SOR lowered the energy faster than GS. One step's solve only: "
                    "the gain the paper saw over a simulation needs an SOR solver in tumble, which it has not)",
                    cmd("000", " --rows splitting")))
    cells, same = [], 0
    for c in cfgs:
        r0 = linear_rate(c["methods"]["GS"]["theta"], skip=0.5)[0]
        r1 = linear_rate(c["scaled"]["theta"], skip=0.5)[0]
        shift = np.median(np.log10(c["scaled"]["theta"][1:] / c["methods"]["GS"]["theta"][1:]))
        same += abs(r1 - r0) <= 0.1 * (1 - min(r0, r1)) and c["scaled"]["iterate_diff"] < 1e-9
        cells.append(f"{lab(c)}: rate {r0:.4f} -> {r1:.4f}, log10 theta shifted by {shift:+.2f}, iterates C "
                     f"lambda' - lambda {c['scaled']['iterate_diff']:.1g} (relative)")
    rows.append(row("eq. 39-40: diagonal scaling (C^2 = 1/diag(A)) displaces the convergence plot by a constant "
                    "but does not change the asymptotic rate (GS on A' = C A C, b' = C b)",
                    "small displacement; same asymptotic behaviour", "; ".join(cells),
                    ("reproduces" if same == len(cfgs) else "partly") + f" ({same} of {len(cfgs)}: asymptotic "
                    "rates (second half) within 10 % of 1 - rate, the same iterates; projected GS and Jacobi "
                    "divide each row's residual by its diagonal, so on C A C they take the same steps, "
                    "C lambda' = lambda, to round-off; only theta, which mixes impulses and velocities, is "
                    "measured in other units)", cmd("000", " --rows splitting")))

    def to_1e6(th):
        k = np.flatnonzero(th <= 1e-6 * th[0])
        return str(int(k[0])) if k.size else f">{len(th) - 1}"

    cells, faster = [], 0
    for c in cfgs:
        rs = [linear_rate(c["gamma"][g]["long"], skip=0.5)[0] for g in SPLIT_GAMMAS]
        faster += all(np.diff(rs) <= 1e-6)
        cells.append(f"{lab(c)}: " + ", ".join(f"gamma {g:g}: {r:.5f} ({to_1e6(c['gamma'][g]['long'])} sweeps to "
                                               "1e-6 theta_0)" for g, r in zip(SPLIT_GAMMAS, rs)))
    stack = max((c for c in cfgs if c["name"] == "box_stack25"), key=lambda c: c["rows"])
    rs = [linear_rate(stack["gamma"][g]["long"], skip=0.5)[0] for g in SPLIT_GAMMAS]
    small = (1 - rs[1]) / (1 - rs[0])
    big = sum(linear_rate(c["gamma"][1e-2]["long"], skip=0.5)[0] < linear_rate(c["gamma"][0.0]["long"], skip=0.5)[0]
              for c in cfgs)
    flat = sum(linear_rate(c["gamma"][1e-4]["long"], skip=0.5)[0] > linear_rate(c["gamma"][0.0]["long"], skip=0.5)[0]
               for c in cfgs)
    rows.append(row("Fig. 6: constraint force mixing A' = A + gamma I (eq. 41) changes the slope of GS's "
                    "convergence; 'even a small value of gamma has a large impact' (asymptotic theta factor per "
                    "sweep of the damped problem, GS to theta <= 1e-28 theta_0, fitted over the second half; gamma / "
                    "max diag(A))", "slope steepens with gamma; small gamma: large impact",
                    "; ".join(cells), ("reproduces" if faster == len(cfgs) and small > 1.5 else "partly")
                    + f" (gamma changes the slope everywhere; steeper at every step of gamma in {faster} of "
                    f"{len(cfgs)} configurations; 1e-2 max diag(A) steeper than undamped in {big} of {len(cfgs)} "
                    f"(on {lab(stack)} 1 - rate x{(1 - rs[3]) / (1 - rs[0]):.1f}); the small gamma 1e-4 makes "
                    f"the slope flatter in {flat} of {len(cfgs)} (x{small:.2f} on {lab(stack)}): a large impact, "
                    "but the wrong way. Our reading, not measured further: A' has one solution, and its components "
                    "in A's null space (half the rows, the Fig. 8 rows) see only gamma, so GS approaches them at "
                    "a rate of order 1 - gamma / A_ii; the undamped problem accepts any of them)",
                    cmd("000", " --rows splitting")))
    # Fig. 7: the damped solution itself, first step, and a real run
    runs = cfm_runs(quick, stack["diag_max"])
    one = "; ".join(f"gamma {g:g}: |lambda| {stack['gamma'][g]['lam_norm']:.4g} N s, KE after the step "
                    f"{stack['gamma'][g]['ke_solution']:.3g} J, sinking {1e3 * stack['gamma'][g]['sink_max']:.3g} mm/s"
                    for g in SPLIT_GAMMAS)
    real = "; ".join(f"{it} sweeps, gamma {g:g}: {'upright' if r['standing'] else 'fallen'}, max drift "
                     f"{1e3 * r['max_drift']:.3g} mm, max pen. {1e3 * r['max_penetration']:.3g} mm"
                     for it, g, r, _ in runs)
    pen = {(it, g): r["max_penetration"] for it, g, r, _ in runs}
    drift = {(it, g): r["max_drift"] for it, g, r, _ in runs}
    rows.append(row(f"Fig. 7: 'the damping on the solution is just as significant': the damped solution against "
                    f"the undamped one ({lab(stack)}; first step's LCP solved to the end, then a real run: shock "
                    f"solver without shock propagation = plain GS, 10 and 100 sweeps, cfm = gamma max diag(A) = gamma "
                    f"{stack['diag_max']:.3g} 1/kg, {'1' if quick else '4'} s)",
                    "slightly damped solution visibly differs from the undamped one",
                    f"first step (KE before {stack['ke_pred']:.3g} J): {one}. Run: {real}",
                    ("reproduces" if stack["gamma"][1e-2]["ke_solution"] > 10 * stack["ke_ref"] + 1e-3 else
                     "partly") + f" (the damped solution leaves the stack sinking: KE after the step "
                    f"{stack['gamma'][1e-2]['ke_solution']:.3g} J at gamma 1e-2 against {stack['ke_ref']:.3g} J; in "
                    f"the runs, gamma 0 -> 1e-2: penetration {1e3 * pen[(100, 0.0)]:.3g} -> "
                    f"{1e3 * pen[(100, 1e-2)]:.3g} mm at 100 sweeps, {1e3 * pen[(10, 0.0)]:.3g} -> "
                    f"{1e3 * pen[(10, 1e-2)]:.3g} mm at 10; drift {1e3 * drift[(10, 0.0)]:.3g} -> "
                    f"{1e3 * drift[(10, 1e-2)]:.3g} mm at 10 sweeps: damping trades penetration for less sliding)",
                    cmd("000", " --rows splitting")))
    notes.append(f"Splitting rows (§3-3.2): the boxed LCP of the scene's first step (pgs' rows: normal + 2 friction "
                 f"rows per contact point, friction bounds +-mu lambda_n of the current normal impulse, eq. 29), "
                 f"A = J M^-1 J^T, b = J V_pred - zeta, solved in NumPy (benchmarks/lcp_splitting.py) from lambda "
                 f"= 0 for {sweeps} sweeps in row order; theta is eq. 38 unscaled (w in m/s, lambda in N s). "
                 f"Reference solution: GS until theta <= 1e-28 theta_0 or {data['ref_sweeps']} sweeps (reached: "
                 + ", ".join(f"{lab(c)} {c['theta_ref']:.2g} after {c['ref_sweeps']}" for c in cfgs) + "). Jacobi "
                 "takes every row's bounds from the sweep's start. Rates (factor of theta per sweep): exp of the slope "
                 "of log theta fitted over the second half of a run (down to 1e-26 theta_0): the asymptotic rate.")
    if figure_dir is not None:
        p = splitting_figure(data, figure_dir / "paper_000_convergence.png")
        notes.append(f"Figure: [{p.name}]({p.name}) (theta per sweep: Fig. 5 per configuration, the methods and "
                     "Fig. 6's gammas on the tallest stack, the kinetic energy per sweep).")
    return rows, notes


def paper_000(quick: bool, only: set | None = None, figure_dir: Path | None = None) -> tuple[list[dict], list[str]]:
    """``only``: run just these sections ({"splitting"}: §3-3.2, Figs. 5-7); None: all."""
    if only is not None:
        rows, notes = [], []
        if "splitting" in only:
            r, n = splitting_rows(quick, figure_dir)
            rows += r
            notes += n
        return rows, notes
    rows, notes = [], []
    r, n = splitting_rows(quick, figure_dir)
    rows += r
    notes += n
    heights = (3, 6, 12) if quick else (3, 6, 12, 25)
    notes.append("Spectral rows: the rows of the first step of a scene (`w._core.rows`: `row_J`, `row_B` = "
                 "M^-1 J^T, `row_body`) assembled densely into A = J M^-1 J^T (normal + 2 friction rows per "
                 "contact point); T = -(D + L)^-1 U the Gauss-Seidel iteration matrix (000 eq. 35); eigenvalues "
                 "with NumPy/SciPy. 'null' = eigenvalues of A below 1e-9 max; 'T at 1' = |eig(T)| > 1 - 1e-6.")
    spec_rows = []
    for n in heights:
        o = spectral("box_stack25", "pgs", {"count": n}, gammas=(0.0, 1e-3, 1e-2))
        spec_rows.append((n, o))
        log(f"000 spectral box_stack{n}: {o}")
    tab = "; ".join(f"n={n}: rows {o['rows']}, null {100 * o['null_frac']:.0f} %, eig(A) "
                    f"{o['eig_min_pos']:.2g}-{o['eig_max']:.2g}, rho(T) {o['rho_0.0']:.6f}, T at 1 "
                    f"{100 * o['ones_0.0']:.0f} %" for n, o in spec_rows)
    big_null = all(o["null_frac"] > 0.3 for _, o in spec_rows)
    rows.append(row("Figs. 3/4/8a-b: A = J M^-1 J^T is symmetric, sparse, with a large null space; T has "
                    "many eigenvalues of modulus 1 (box stack, against stack height n)",
                    "large null space; many eig(T) = 1; rho(T) ~ 1",
                    tab + f"; symmetry error {max(o['sym_err'] for _, o in spec_rows):.1g}, nonzeros "
                    f"{100 * spec_rows[-1][1]['nnz_frac']:.1f} % (n={spec_rows[-1][0]})",
                    ("reproduces" if big_null else "partly") + " (null fraction "
                    + ", ".join(f"{100 * o['null_frac']:.0f} %" for _, o in spec_rows) + ")", cmd("000")))
    damp = "; ".join(f"n={n}: rho(T) gamma 0 {o['rho_0.0']:.6f}, gamma 1e-3 max(A) {o['rho_0.001']:.6f}, "
                     f"1e-2 {o['rho_0.01']:.6f}; T at 1: {100 * o['ones_0.0']:.0f} % -> "
                     f"{100 * o['ones_0.001']:.0f} %" for n, o in spec_rows)
    gone = all(o["ones_0.001"] == 0.0 and o["rho_0.001"] < 1.0 for _, o in spec_rows)
    rows.append(row("Fig. 8c-d: damping (A + gamma I) removes the multiple eigenvalues 1 of T",
                    "multiple eig(T) = 1 disappear", damp,
                    "reproduces" if gone else "does not (eigenvalues at 1 remain)", cmd("000")))
    sub = [o["sub_0.0"] for _, o in spec_rows]
    rho_trend = [o["rho_0.001"] for _, o in spec_rows]
    mono = all(np.diff(sub) >= 0)
    rows.append(row("§3.1: the smaller the spectral radius, the faster GS converges; against stack height n: the "
                    "largest |eig(T)| below 1 (undamped) and rho(T) damped (gamma = 1e-3 max(A))",
                    "rho(T) <= 1; taller stacks slower (Fig. 9: plain PGS fails on tall stacks)",
                    "undamped: " + ", ".join(f"n={n}: {r:.6f}" for (n, _), r in zip(spec_rows, sub))
                    + "; damped: " + ", ".join(f"n={n}: {r:.6f}" for (n, _), r in zip(spec_rows, rho_trend))
                    + " (stacking.md measured merit factor 0.9927 per sweep on box_stack25)",
                    ("reproduces" if mono else "partly") + (" (undamped rate grows with n)" if mono else
                                                            " (undamped rate not monotone in n)"), cmd("000")))
    for name, params in (("ball_grid125", {"n": 3 if quick else 4}), ("wall200", {"rows": 6, "columns": 5})):
        if name == "wall200" and quick:
            continue
        try:
            o = spectral(name, "pgs", params, gammas=(0.0,))
        except Exception as e:  # noqa: BLE001 - a scene without the parameter: report it
            log(f"000 spectral {name}: {e!r}")
            continue
        fig = "Fig. 3 (ball grid)" if name.startswith("ball") else "Fig. 4 (wall)"
        rows.append(row(f"{fig}: null space of A, eig(T) at 1 ({name} {params or ''})",
                        "large null space, many eig(T) = 1",
                        f"rows {o['rows']}, null {100 * o['null_frac']:.0f} %, eig(A) {o['eig_min_pos']:.2g}-"
                        f"{o['eig_max']:.2g}, rho(T) {o['rho_0.0']:.6f}, T at 1 {100 * o['ones_0.0']:.0f} %",
                        "reproduces" if o["null_frac"] > 0.2 else "partly", cmd("000")))

    # --- Fig. 18 with fixed sweep counts
    steps = 5 if quick else 15
    cases = [("box_stack25", {"count": c}) for c in ((5, 25) if quick else (5, 10, 25, 50, 100))]
    cases += [("pyramid20", {"base": b}) for b in ((6, 12) if quick else (6, 10, 15, 20, 28))]
    cases += [("ball_grid125", {"n": k}) for k in ((3,) if quick else (3, 5, 7))]
    xs, ys, per = [], [], []
    fig19_points = []
    import numba
    threads = numba.get_num_threads()
    numba.set_num_threads(1)  # one thread: a step's parallel regions do not wait for a descheduled thread
    fixed_sweep_cost("box_stack25", {"count": 3}, 2)  # compile this settings variant
    for name, params in cases:
        pts = fixed_sweep_cost(name, params, steps)
        fig19_points.append((name, params, pts))
        c = np.array([p[0] for p in pts], float)
        t = np.array([p[1] for p in pts], float)
        xs += list(c)
        ys += list(t)
        per.append((name, params, float(np.median(c)), float(np.median(t))))
        log(f"000 fig18 {name} {params}: contacts {np.median(c):.0f}, ms {np.median(t):.3f}")
    numba.set_num_threads(threads)
    x, y = np.array(xs), np.array(ys)
    slope, icpt = np.polyfit(x, y, 1)
    r2 = 1 - np.sum((y - (slope * x + icpt)) ** 2) / np.sum((y - y.mean()) ** 2)
    mx = np.array([p[2] for p in per])
    my = np.array([p[3] for p in per])
    s2, i2 = np.polyfit(mx, my, 1)
    r2m = 1 - np.sum((my - (s2 * mx + i2)) ** 2) / np.sum((my - my.mean()) ** 2)
    rows.append(row("Fig. 18: time per step (without collision detection) linear in the number of contacts; "
                    "shock, FIXED sweeps (tolerance 0, correction_tolerance 0, block_iterations 1: 10 dynamics "
                    "+ 5 correction sweeps per layer), 1 Numba thread",
                    "linear", f"{len(cases)} scenes, {len(x)} steps, {int(x.min())}-{int(x.max())} contacts: "
                    f"{1e3 * slope:.3g} us/contact + {icpt:.3g} ms, R^2 = {r2:.3f} (per-step); on the scene "
                    f"medians R^2 = {r2m:.3f}",
                    ("reproduces" if r2m > 0.95 else "partly") + f" on the scene medians (R^2 {r2m:.3f}); the "
                    f"per-step R^2 {r2:.3f} includes the shared machine's timing noise; with adaptive stopping "
                    "the committed stacking.md fit had R^2 0.218", cmd("000")))
    rows.append(fig19_row(fig19_points))
    notes.append("Fig. 18 scenes (median contacts, median ms per step without collision): " + "; ".join(
        f"{n} {p}: {c:.0f}, {t:.3g} ms" for n, p, c, t in per))

    # --- Figs. 10-11: the wall and the tower after 4 s with 10 and 100 iterations, the paper's plain sweeps
    secs = 1.0 if quick else 4.0
    numba.set_num_threads(1)  # as Fig. 18: with 2 threads on a shared machine these steps took 0.1-0.5 s
    for name, fig in (("wall200", "Fig. 10"), ("tower320", "Fig. 11")):
        cells, oks = [], []
        for it in (10, 100):
            st = {"iterations": it, "block_iterations": 1, "tolerance": 0.0}
            spec = tb.scenes.spec(name)
            w = spec.build(solver="shock", **st)
            m = SceneMetrics(spec)
            m.observe(w)
            t0 = time.perf_counter()
            for _ in range(int(round(secs / 0.01))):
                w.step(0.01)
                m.observe(w)
            ms = 1e3 * (time.perf_counter() - t0) / int(round(secs / 0.01))
            r = m.result()
            oks.append(bool(r["standing"]))
            state = "stands" if r["standing"] else "falls"
            cells.append(f"{it} it.: {state}, max drift {1e3 * r['max_drift']:.3g} mm, "
                         f"max pen. {1e3 * r['max_penetration']:.3g} mm, {ms:.3g} ms/step")
            log(f"000 {name} {it} it: {cells[-1]}")
        rows.append(row(f"{fig}: {name} under shock propagation after {secs:.0f} s, 10 and 100 iterations (paper's "
                        "plain sweeps: block_iterations 1, tolerance 0; dt 0.01; 1 Numba thread)",
                        "stands at both (acceptable convergence)", "; ".join(cells),
                        rate_verdict(sum(oks), 2) + f" ({sum(oks)}/2 stand)", cmd("000")))
    numba.set_num_threads(threads)

    # --- Figs. 29-30: the popcorn saw-tooth of a single body resting on the ground against dt (a box and the
    # cow), and the teeth in a cow pile's heights
    saw = {}
    for shape in ("box", "cow"):
        for slop in (0.0, 1e-4):
            for dt in (0.01, 0.005, 0.001):
                saw[(shape, slop, dt)] = sawtooth(dt, slop, 1.0 if quick else 2.0, shape)
                log(f"000 popcorn {shape} slop {slop} dt {dt}: {saw[(shape, slop, dt)]}")
    for shape, size in (("box", "a 0.5 m box"), ("cow", "the scenes' cow, 19 hulls, standing on its legs")):
        cells = []
        for slop in (0.0, 1e-4):
            cells.append(f"correction_slop {slop:g}: " + ", ".join(
                f"dt {dt:g}: {1e6 * saw[(shape, slop, dt)][0]:.3g} um p-p ({saw[(shape, slop, dt)][1]} drops)"
                for dt in (0.01, 0.005, 0.001)))
        amp0 = [saw[(shape, 0.0, dt)][0] for dt in (0.01, 0.005, 0.001)]
        teeth = saw[(shape, 0.0, 0.01)][1] > 0
        shrinks = amp0[0] > amp0[1] > amp0[2]
        if max(saw[(shape, sl, dt)][0] for sl in (0.0, 1e-4) for dt in (0.01, 0.005, 0.001)) < 1e-6:
            verdict = (f"does not (no saw-tooth at any dt: the {shape} rests to < 1 um peak-to-peak; a single "
                       "body on the ground is one contact group whose few points shock's block solve (and the "
                       "projection) resolve to tolerance here, so the inaccurate GS multipliers the paper blames "
                       "do not arise)")
        else:
            verdict = ("reproduces" if teeth and shrinks else ("partly" if shrinks or teeth else "does not")) + \
                (f" (slop 0: amplitude {1e6 * amp0[0]:.3g} -> {1e6 * amp0[2]:.3g} um from dt 0.01 to 0.001"
                 + ("" if teeth else "; no drops at dt 0.01: no saw-tooth") + ")")
        rows.append(row(f"Fig. 30: potential energy of a single body standing on a fixed ground is a saw-tooth "
                        f"(slow rise, sudden drop) whose amplitude shrinks with dt (shock; {size}, dropped 1 cm; "
                        "height peak-to-peak over the last second)",
                        "saw-tooth, diminished as dt drops (0.01 -> 0.001 s)", "; ".join(cells), verdict,
                        cmd("000")))
    pop = pile_popcorn(quick)
    log(f"000 popcorn pile: {pop}")
    rows.append(row(f"Fig. 29: cows in a cow pile (shock, dt 0.01) show long-term popcorn: potential energy "
                    f"rises slowly, then drops almost at once ({pop['cows']} cows, {pop['seconds']:g} s, the last "
                    "3 s; a tooth: a rise over >= 5 steps by >= 0.1 mm, then half of it lost within 3 steps)",
                    "both plotted cows show saw teeth", f"{pop['runs']} slow rising runs, {pop['teeth']} teeth in "
                    f"{pop['cows_with_teeth']} of {pop['cows']} cows, largest tooth {1e3 * pop['largest_tooth_m']:.2f}"
                    f" mm; kinetic energy at the end {pop['kinetic_end_j']:.3g} J",
                    ("partly (teeth exist in the pile, where many contacts share a GS solve, but few and sub-mm; "
                     "a single cow on the ground shows none, Fig. 30 row)" if pop["teeth"] else
                     "does not (no tooth in the pile's heights)"), cmd("000")))
    notes.append("Popcorn rows: a 0.5 m, 125 kg box or the scenes' cow (density 1000) dropped from 1 cm onto a "
                 "fixed ground box, shock solver with its defaults except dt and correction_slop (tumble's default "
                 "1e-4 keeps resting contacts detected; 0 is the paper's projection); 'drops' = steps where the "
                 "body's height falls by more than a quarter of the peak-to-peak amplitude in one step. The pile "
                 "row: `tumble.scenes` cow_pile (defaults but count and seconds), every cow's height.")

    # --- cited from stacking.md (make bench-stacking, ~5 min)
    st = "`make bench-stacking` (stacking.md)"
    rows += [
        row("Fig. 9: 25-box stack, shock 10 it., 4 s: stands, < 1 mm drift and penetration (cited)",
            "stands (shock); pgs misaligned", "shock: drift 0.00139 mm, pen. 0.00042 mm; pgs 10 it.: falls "
            "(2.01 m), pgs 100 it.: 136 mm out of line", "reproduces", st),
        row("Fig. 13: ball grid 125, 0.1 m start overlaps, 5 iterations: fixed within 6 frames with shock "
            "propagation, not without (cited)", "with: fixed at frame 6; without: not fixed",
            "with: 0.1 mm from frame 3; without: 0.408 mm at frame 6, 0.11 mm at frame 8",
            "partly (the with-case reproduces; without still converges, x0.4 per frame)", st),
        row("Fig. 5: linear convergence of the GS merit (pgs, step 50) (cited)", "log merit on a line",
            "theta per sweep 0.9927 (box_stack25, R^2 1.000), 0.9927 (wall200), 0.25 (ball_grid125)",
            "reproduces", st),
        # (the tower-roof and falling-roof rows that stood here are measured now: tower_roof_rows, worst_frame_rows)
    ]
    from benchmarks.nonconvex import paper_rows  # issue 21: the cow pile, silo and 3000-object scenes

    more, more_notes = paper_rows(quick, row, cmd("000"))
    rows += more
    notes += more_notes
    for extra in (tower_roof_rows, worst_frame_rows):
        r, n = extra(quick)
        rows += r
        notes += n
    notes.append("Not done: Figs. 24 and 26 (the roof-tower in Novodex and ODE): neither engine is available here "
                 "(Novodex/PhysX 2 is discontinued; ODE has no maintained Python package); PyBullet and MuJoCo "
                 "stand in for them in the tower_roof rows and `make bench-stacking`.")
    return rows, notes


# ================================================================================================
# 004 Schornbaum (impulse)

FINDING = re.compile(r"^(?P<scene>\S+) (?P<claim>.*?)(?:: thesis (?P<paper>.*?); ours (?P<ours>.*)"
                     r"|\s*\(thesis(?::\s*(?P<paper2>[^)]*))?\): ours (?P<ours2>.*)"
                     r"|: (?P<ours3>.*))$")


def impulse_cited(data: dict | None = None) -> list[dict]:
    """The findings of the committed impulse.json (``make bench-impulse``; or of ``data``, a fresh run's
    JSON), one row each: the bench's own lines '**scene** claim: thesis X; ours Y -> **verdict**
    (criterion)' split into cells."""
    if data is None:
        data = json.loads((ROOT / RESULTS / "impulse.json").read_text())
    out = []
    for line in data["findings"]:
        text = line[2:].replace("**", "") if line.startswith("- ") else line.replace("**", "")
        left, _, verdict = text.partition(" -> ")
        m = FINDING.match(left)
        if not m:
            out.append(row(left + " (cited)", "-", "-", verdict or "-", "`make bench-impulse` (impulse.md)"))
            continue
        paper = m["paper"] or m["paper2"] or "-"
        quote = re.search(r'"([^"]+)"', m["claim"])
        if paper == "-" and quote:
            paper = f'"{quote[1]}"'
        ours = m["ours"] or m["ours2"] or m["ours3"] or "-"
        ours = ours[5:] if ours.startswith("ours ") else ours
        if not verdict:
            verdict = ours
        out.append(row(f"{m['scene']} {m['claim']} (cited)", paper, ours, verdict,
                       "`make bench-impulse` (impulse.md)"))
    return out


def stack_side_by_side(name: str, params: dict, seconds: float) -> list[tuple[str, dict, float]]:
    """The same stack under impulse with Alg. 10 shock propagation on / off and under the shock solver."""
    res = []
    for label, solver, st in (("impulse, shock propagation (Alg. 10)", "impulse", {"shock_propagation": True}),
                              ("impulse, no shock propagation", "impulse", {"shock_propagation": False}),
                              ("shock solver (000)", "shock", {})):
        spec = tb.scenes.spec(name, **params)
        dt = spec.dt if solver != "impulse" else 1.0 / 240.0
        warm = spec.build(solver=solver, **st)  # a throw-away copy compiles / loads this variant's kernels
        for _ in range(2):
            warm.step(dt)
        w = spec.build(solver=solver, **st)
        m = SceneMetrics(spec)
        m.observe(w)
        n = int(round(seconds / dt))
        t = 0.0
        for _ in range(n):
            t0 = time.perf_counter()
            w.step(dt)
            t += time.perf_counter() - t0
            m.observe(w)
        r = m.result()
        r["dt"] = dt
        r["asleep"] = int(w.counters.get("asleep", 0)) if solver == "impulse" else None
        res.append((label, r, 1e3 * t / n))
        log(f"004 {name} {label}: drift {r['max_drift']:.4g} pen {r['max_penetration']:.4g} {1e3 * t / n:.3g} ms")
    return res


def impulse_threads(name: str, params: dict, seconds: float) -> dict:
    """Whole-run step time with 1 and 2 Numba threads (§5.2: the parallel collision response)."""
    import numba
    out = {1: [], 2: []}
    for n in (1, 2, 1, 2, 1, 2):   # alternated, three runs each: the shared machine's load drifts
        numba.set_num_threads(n)
        spec = tb.scenes.spec(name, **params)
        w = spec.build(solver="impulse")
        for _ in range(2):
            w.step(1.0 / 240.0)
        t0 = time.perf_counter()
        for _ in range(int(round(seconds * 240))):
            w.step(1.0 / 240.0)
        out[n].append(time.perf_counter() - t0)
        log(f"004 threads {n}: {out[n][-1]:.2f} s")
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return out


def damping_rows() -> list[dict]:
    """§5.3 re-run with one Numba thread (no waits on a descheduled thread): the whole run of E-STACK5 and
    E-CAGE384 (the scenes' own durations) with gravity damping 0.7 and 0, alternated, twice each."""
    from benchmarks.impulse import simulate

    thesis = {"bullet_stacks": ("E-STACK5", 1.99), "cage": ("E-CAGE384", 1.53)}
    out = []
    for scene, (tid, th) in thesis.items():
        secs = float(tb.scenes.spec(scene).seconds)
        walls = {0.7: [], 0.0: []}
        for g in (0.7, 0.0, 0.7, 0.0):
            r = simulate(scene, {}, {"gravity_damping": g}, secs, threads=1)
            walls[g].append(float(np.sum(r.ms)) / 1e3)
            log(f"004 damping {scene} {g}: {walls[g][-1]:.2f} s")
        sp = min(walls[0.0]) / min(walls[0.7])
        verdict = ("reproduces" if sp >= th / 1.5 else ("partly" if sp > 1.1 else "does not")) + \
            f" ({sp:.2f}x vs {th:g}x)"
        out.append(row(f"§5.3: {tid} ({scene}, {secs:g} s) gravity damping 0.7 vs 0: whole-run speed-up (re-run, "
                       "1 Numba thread, best of 2 alternated runs)", f"{th:g}x faster",
                       f"damped {', '.join(f'{x:.2f}' for x in walls[0.7])} s; undamped "
                       f"{', '.join(f'{x:.2f}' for x in walls[0.0])} s: {sp:.2f}x", verdict, cmd("004")))
    return out


# --- issue 21 (h-papers): the catapult of Fig. 37, the 180 steps/s limit of §5.6, the cited rows re-run

def catapult_run(load: int, solver: str, settings: dict, dt: float | None = None) -> dict:
    """One run of scene ``catapult`` (Fig. 37a: ``load`` 7, b: 15) for its 3 s: the load's centre of
    mass just before the large box enters (1 s), its highest rise after that and where it lands; the
    plank's tilt and the load's largest displacement before the hit (weight and balance at rest), the
    plank's fastest spin after it, and the wall time of every simulation step (8 time steps of 1/240 s
    = 33 1/3 ms; the thesis' real-time test)."""
    spec = tb.scenes.spec("catapult", load=load)
    dt = float(spec.dt if dt is None else dt)
    w = spec.build(solver=solver, **settings)
    box = spec.tagged("box")
    plank = int(spec.tagged("plank")[0])
    n = int(round(spec.seconds / dt))
    i_hit = int(round(float(spec.params.get("drop_time", 1.0)) / dt)) - 1   # the last step before the drop
    i_set = int(round(0.5 / dt))                                            # (b)'s pyramid has landed by 0.5 s
    z, x, spin, tilt, ms = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    p_set = None
    move = 0.0
    for k in range(n):
        t0 = time.perf_counter()
        w.step(dt)
        ms[k] = time.perf_counter() - t0
        pos = w.positions
        z[k] = pos[box, 2].mean()
        x[k] = pos[box, 0].mean()
        spin[k] = w.angular_velocities[plank, 1]
        q = w.orientations[plank]
        tilt[k] = math.degrees(2.0 * math.atan2(q[2], q[0]))               # about y; -4 deg at rest
        if k == i_set:
            p_set = pos[box].copy()
        elif i_set < k <= i_hit:
            move = max(move, float(np.linalg.norm(pos[box] - p_set, axis=1).max()))
    sps = int(round(SIM_STEP / dt))
    sim = 1e3 * ms[: (n // sps) * sps].reshape(-1, sps).sum(axis=1)
    j = i_hit + int(np.argmax(z[i_hit:]))
    return {"rise": float(z[j] - z[i_hit]), "dx_top": float(x[j] - x[i_hit]), "dx_end": float(x[-1] - x[i_hit]),
            "t_top": (j + 1) * dt, "spin": float(np.abs(spin[i_hit:]).max()), "move": move,
            "tilt_dev": float(np.abs(tilt[i_set:i_hit + 1] - tilt[i_hit]).max()), "tilt": float(tilt[i_hit]),
            "sim_ms_max": float(sim[2:].max()), "sim_ms_mean": float(sim[2:].mean()),
            "asleep": int(np.sum(w.sleeping[box])) if solver == "impulse" else None, "boxes": len(box)}


SIM_STEP = 1.0 / 30.0   # 004 §5: the state is written every 33 1/3 ms, one "simulation step"


def catapult_rows(quick: bool) -> tuple[list[dict], list[str]]:
    from benchmarks.impulse import preset_settings

    configs = [("impulse, HP preset (default)", "impulse", {}, None),
               ("impulse, HA preset (dt 1/960)", "impulse", preset_settings("high_accuracy"), 1.0 / 960.0)]
    if not quick:
        configs += [("impulse, HP without shock propagation", "impulse", {"shock_propagation": False}, None),
                    ("impulse, HP with unlimited iterations", "impulse",
                     {"max_iterations_factor": 0.0, "shock_propagation": False}, None),
                    ("pgs (defaults)", "pgs", {}, None)]
    catapult_run(7, "impulse", {})                      # compile / load the kernels outside the timed runs
    res = {}
    busy = math.nan
    for label, solver, st, dt in configs:
        mark, t0 = cpu_mark(), time.perf_counter()
        for load in (7, 15):
            res[(label, load)] = r = catapult_run(load, solver, st, dt)
            log(f"004 catapult {label} load {load}: {r}")
        if label == configs[0][0]:
            busy = other_cores(mark, time.perf_counter() - t0)     # during the HP runs (the real-time row)
    rows = []
    for label, solver, st, _ in configs:
        a, b = res[(label, 7)], res[(label, 15)]
        higher = b["rise"] > a["rise"]
        farther = b["dx_end"] > a["dx_end"]
        cells = "; ".join(f"{n} boxes: rise {100 * r['rise']:.1f} cm at {r['t_top']:.2f} s, lands "
                          f"{100 * r['dx_end']:.1f} cm farther (+x), plank spin {r['spin']:.2f} rad/s"
                          for n, r in ((7, a), (15, b)))
        if higher and farther:
            verdict = "reproduces (15 boxes higher and farther)"
        elif higher or farther:
            verdict = "partly (15 boxes " + ("higher, not farther" if higher else "farther, not higher") + ")"
        else:
            verdict = "does not (the 7 boxes go higher and farther)"
        still = [f"{r['boxes']}" for r in (a, b) if r["rise"] < 0.01]
        if still:
            verdict += (f"; the {' and '.join(still)}-box load never left the plank here (rise < 1 cm; not "
                        "investigated)")
        if not (higher and farther) and st.get("shock_propagation", True) and solver == "impulse" \
                and abs(a["spin"] - b["spin"]) < 0.05 * a["spin"]:
            verdict += (f"; cause: the plank spins at the same rate under either load ({a['spin']:.2f} vs "
                        f"{b['spin']:.2f} rad/s): the global iterations stop at their cap (2 x contacts) before "
                        "the plank-load contacts have passed the load's inertia to the plank, and Alg. 10 resolves the "
                        "rest with the plank (the lower layer) frozen; with unlimited iterations the plank under the "
                        "lighter load spins faster (the 'unlimited iterations' row of the full run)")
        rows.append(row(f"Fig. 37a/b: catapult, 7 boxes of 10 cm (5.6 kg) vs 15 of 6.4 cm (3.15 kg) on a 2 m oak "
                        f"plank hit by a 20 cm oak box falling 1 m ({label}): the load's centre of mass",
                        "the 15 lighter boxes are tossed higher and farther than the 7", cells, verdict,
                        cmd("004")))
    hp = [res[(configs[0][0], n)] for n in (7, 15)]
    ok = all(r["tilt_dev"] < 0.05 and r["move"] < 1e-3 for r in hp)
    rows.append(row("§5.6 / Fig. 37: \"correct and stable handling of weight and balance\": before the hit the "
                    "loaded plank rests tilted on the fulcrum and the load does not move (impulse, HP; 0.5-1 s)",
                    "stable",
                    "; ".join(f"{r['boxes']} boxes: plank tilt {r['tilt']:.3f} deg (moves {r['tilt_dev']:.2g} deg), "
                              f"load moves at most {1e3 * r['move']:.3g} mm, {r['asleep']} of {r['boxes']} boxes "
                              "asleep at 3 s" for r in hp),
                    "reproduces" if ok else "does not (the plank or the load moves)", cmd("004")))
    rt = all(r["sim_ms_max"] <= 100.0 / 3.0 for r in hp)
    rows.append(row("Fig. 37: both catapults run in real time (every simulation step of 8 time steps <= 33 1/3 ms; "
                    "impulse HP, 1/240 s)", "yes (E6400, 2 threads)",
                    "; ".join(f"{r['boxes']} boxes: mean {r['sim_ms_mean']:.2g} ms, max {r['sim_ms_max']:.2g} ms per "
                              "simulation step" for r in hp),
                    ("reproduces" if rt else "does not") + f" (other processes kept {busy:.2f} of the 2 cores busy "
                    "during these runs" + (": timings inflated)" if busy > 0.5 else ")"), cmd("004")))
    notes = ["Catapult (`tumble.scenes` `catapult`, load=7 / 15): the plank, fulcrum, load layout and drop are "
             "assumptions (the thesis gives only the box sizes; see the scene's docstring): a 2.0 x 0.2 x 0.03 m oak "
             "plank (9.6 kg) on a fixed oak edge 7 cm high (4 degree tilt), the load 0.75 m left of the middle (a "
             "column of 7, alternately twisted 3 degrees, or a 5-4-3-2-1 pyramid of 15 dropped 5 cm), the 20 cm box "
             "entering at 1 s with its bottom 1 m above the plank 0.8 m right of the middle. 'rise' = highest "
             "centre of mass of the load after 1 s minus its height at 1 s; 'farther' = the centre's x at 3 s "
             "minus at 1 s."]
    return rows, notes


def step_rate_run(scene: str, params: dict, rate: float, seconds: float, settings: dict) -> dict:
    """``scene`` under impulse at ``rate`` time steps per second for ``seconds``: the deepest overlap of any
    two bodies over the run (SceneMetrics), the share of dynamic bodies asleep at the end, the kinetic
    energy at the end and (balls_well) how many balls end outside the well."""
    spec = tb.scenes.spec(scene, **params)
    w = spec.build(solver="impulse", **settings)
    m = SceneMetrics(spec)
    m.observe(w)
    dt = 1.0 / rate
    for _ in range(int(round(seconds * rate))):
        w.step(dt)
        m.observe(w)
    r = m.result()
    dyn = np.array([not b.fixed for b in spec.bodies])
    r["asleep_frac"] = float(np.mean(w.sleeping[dyn]))
    r["ke"] = float(w.kinetic_energy())
    if scene == "balls_well":
        hw = 0.5 * float(spec.params.get("width", 1.0))
        p = w.positions[dyn]
        r["outside"] = int(np.sum((np.abs(p[:, 0]) > hw) | (np.abs(p[:, 1]) > hw)))
    return r


def step_rate_rows(quick: bool) -> tuple[list[dict], list[str]]:
    """004 §5.6: "one second of simulation time should be divided into at least 180 equally sized time
    steps" (g = 10). The thesis' own scenes at 240 ... 60 steps/s, HP settings as they are and with the
    two dt-bound thresholds scaled to dt."""
    rates = (240, 180, 120, 60) if quick else (240, 200, 180, 150, 120, 90, 60)
    scenes = ([("bullet_stacks", {"stacks": 1}, 4.0)] if quick else
              [("bullet_stacks", {}, 6.0), ("balls_well", {}, 6.0)])
    g = 10.0
    rows = []
    for scene, params, secs in scenes:
        for how in ("HP as is",) if quick else ("HP as is", "HP, thresholds scaled to dt"):
            cells, res = [], {}
            for rate in rates:
                dt = 1.0 / rate
                st = {} if how == "HP as is" else {"restitution_threshold": 1.1 * g * dt,
                                                   "penetration_threshold": 10.0 * g * dt * dt}
                res[rate] = r = step_rate_run(scene, params, rate, secs, st)
                cells.append(f"{rate}/s: max overlap {1e3 * r['max_penetration']:.3g} mm, "
                             f"{100 * r['asleep_frac']:.0f} % asleep, KE {r['ke']:.3g} J"
                             + (f", {r['outside']} outside the well" if "outside" in r else ""))
                log(f"004 step rate {scene} {how} {rate}: {cells[-1]}")
            ref = res[240]
            # degraded: deeper overlaps than twice the 240/s run's (and > 1 mm), or under half its share asleep at
            # the end (the share after a chaotic impact varies by ~10 points between rates on its own)
            bad = {rt: (r["max_penetration"] > max(2.0 * ref["max_penetration"], 1e-3)
                        or r["asleep_frac"] < 0.5 * ref["asleep_frac"]) for rt, r in res.items()}
            ok_rates = [rt for rt in rates if not any(bad[q] for q in rates if q >= rt)]
            low = min(ok_rates) if ok_rates else None
            worse = [rt for rt in rates if bad[rt]]
            lowest = (f"as good as 240/s down to {low}/s" if low else "worse than 240/s at every other rate") + \
                (f", degraded from {max(worse)}/s" if worse else ", degraded at none")
            if low is None or low > 180:
                verdict = "does not (degrades above 180/s)"
            elif low == 180 and worse:
                verdict = "reproduces (degrades just below 180/s)"
            else:
                verdict = f"partly (no degradation at 180/s; the limit lies lower here, below {low}/s)"
            tid = "E-STACK5" if scene == "bullet_stacks" else "E-WELL324"
            rows.append(row(f"§5.6: at least 180 time steps per second with standard gravity ({tid}: {scene} "
                            f"{params or ''}, {secs:g} s; {how})", ">= 180 steps/s needed (dt <= 5.56 ms)",
                            "; ".join(cells), verdict + f" ({lowest}; degraded = max overlap > 2x the 240/s run's "
                            "and > 1 mm, or under half its share asleep at the end)", cmd("004")))
    notes = ["Step-rate rows: the impulse solver at the given time steps per second, every other setting the HP "
             "preset's (its restitution threshold 4.58 cm/s is 1.1 g dt at 240/s; at 180/s g dt = 5.56 cm/s "
             "exceeds it, so a resting contact's gravity-induced approach is above the threshold and bounces with "
             "e = 0.25); 'thresholds scaled to dt' sets restitution_threshold = 1.1 g dt and "
             "penetration_threshold = 10 g dt^2 (the HP values' own relation to dt at 240/s). KE at the end: "
             "in E-STACK5 mostly the 76 kg bullet still rolling."]
    return rows, notes


def impulse_rerun() -> list[dict]:
    """The experiments of ``make bench-impulse`` re-run on the committed code (its full budget, ~7 min on
    a quiet machine) into a scratch folder, their findings split into rows like :func:`impulse_cited`."""
    import tempfile

    from benchmarks import impulse as bi

    with tempfile.TemporaryDirectory() as tmp:
        bi.main(["--out", tmp])
        data = json.loads((Path(tmp) / "impulse.json").read_text())
    out = impulse_cited(data)
    for r in out:
        r["claim"] = r["claim"].replace(" (cited)", " (re-run of bench-impulse's experiment here)")
        r["command"] = cmd("004")
    return out


def paper_004(quick: bool) -> tuple[list[dict], list[str]]:
    rows, notes = [], []
    secs = 1.0 if quick else 4.0
    for name, params in (("box_stack25", {"count": 10 if quick else 25}), ("stack10", {})):
        res = stack_side_by_side(name, params, secs)
        cells = "; ".join(f"{lab}: {'stands' if r['standing'] else 'falls'}, drift {1e3 * r['max_drift']:.3g} mm, "
                          f"pen. {1e3 * r['max_penetration']:.3g} mm, {ms:.3g} ms/step (dt {r['dt']:.4g})"
                          + ("" if r["asleep"] is None else f", {r['asleep']} asleep at the end")
                          for lab, r, ms in res)
        sp, nosp, shock = res
        verdict = ("reproduces" if sp[1]["standing"] else "does not") + \
            f" (impulse with Alg. 10 {'stands' if sp[1]['standing'] else 'falls'}, shock solver " \
            f"{'stands' if shock[1]['standing'] else 'falls'})"
        rows.append(row(f"Alg. 10 shock propagation in the impulse solver vs the shock solver (000) on the same "
                        f"stack ({name} {params or ''}, {secs:.0f} s)",
                        "shock propagation keeps stacks at rest (thesis §4.4)", cells, verdict, cmd("004")))
    if not quick:
        mark, t0 = cpu_mark(), time.perf_counter()
        th = impulse_threads("bullet_stacks", {}, 1.5)
        busy = other_cores(mark, time.perf_counter() - t0)
        t1, t2 = min(th[1]), min(th[2])
        sp = t1 / t2
        rows.append(row("§5.2: parallel collision response, 2 threads vs 1 (bullet_stacks = E-STACK5, first 1.5 s "
                        "incl. the impact at 0.7 s; best of 3 alternated runs each)",
                        "18 % less total time (E-STACK5, 2 threads)",
                        f"1 thread {', '.join(f'{x:.2f}' for x in th[1])} s; 2 threads "
                        f"{', '.join(f'{x:.2f}' for x in th[2])} s; best: {100 * (1 - t2 / t1):.0f} % less "
                        f"(speed-up {sp:.2f}x); other processes kept {busy:.2f} of the 2 cores busy",
                        ("reproduces" if sp >= 1.15 else "does not") + f" ({sp:.2f}x; a 2-thread step waits for "
                        "a descheduled thread when the other core is busy, see impulse.md notes; committed "
                        "impulse.md: 1.1x on E-STACK5, 0.95x on E-CAGE384)", cmd("004")))
        rows += damping_rows()
    for extra in (catapult_rows, step_rate_rows):
        r, n = extra(quick)
        rows += r
        notes += n
    if quick:
        rows += impulse_cited()
        notes.append("Rows marked (cited) are the findings of the committed `impulse.json` (`make bench-impulse`, "
                     "~7 min), quoted verbatim with their own criteria; the others are measured here.")
    else:
        rows += impulse_rerun()
        notes.append("Rows marked '(re-run of bench-impulse's experiment here)' are the findings of "
                     "`benchmarks/impulse.py`'s experiments run by this script on the committed code (its full "
                     "budget, into a scratch folder; the committed impulse.md is not touched), with their own "
                     "criteria; `--quick` cites the committed `impulse.json` instead.")
    return rows, notes


# ================================================================================================
# 002 Gauss' principle of least constraint (brick towers), planar (tb.gauss2d) and 3-D (gauss solver)

P002_FULL = {"tower_steps": 1000, "drift_steps": 300, "penalty_steps": 300, "collision_steps": 80,
             "harmonic": (2, 5, 10, 20), "world_seconds": 2.0}
P002_QUICK = {**P002_FULL, "tower_steps": 500, "penalty_steps": 150, "world_seconds": 1.0}


def _length_error(s, positions) -> float:
    e = positions[:, s.bars[:, 0]] - positions[:, s.bars[:, 1]]
    return float(np.abs(np.linalg.norm(e, axis=2) - s.rest_lengths).max())


def _ok(flag: bool, yes: str = "reproduces", no: str = "does not") -> str:
    return yes if flag else no


def paper_002(quick: bool, cfg: dict | None = None) -> tuple[list[dict], list[str]]:
    """Paper 002 (Gauss' principle as a position-based QP; LP stability of brick towers): every row is
    measured here except the 3-D World timings (gauss_world.md) and the NNLS oracle (a test)."""
    from tumble import gauss2d as g
    from tumble.gauss2d.model import brick_layout, rigidity_matrix
    from tumble.gauss2d.scenes import critical_shift

    c = {**(P002_QUICK if quick else P002_FULL), **(cfg or {})}
    rows, notes = [], []
    c2 = cmd("002")
    dt = 2e-3
    crit = critical_shift()

    # --- §1 / Fig. 1: stability of a tower is an LP (2-D harmonic stacks, 3-D overhang scene)
    ns = c["harmonic"]
    res = [(n, g.stability(g.overhang(n, crit * (1 - 1e-3))).stable,
            g.stability(g.overhang(n, crit * (1 + 1e-3))).stable) for n in ns]
    good = sum(1 for _, lo, hi in res if lo and not hi)
    t0 = time.perf_counter()
    g.stability(g.overhang(max(ns), 0.0))
    lp_ms = 1e3 * (time.perf_counter() - t0)
    rows.append(row("§1 / Fig. 1: stability of a brick tower is a linear feasibility problem (planar harmonic "
                    f"overhang stacks of {', '.join(map(str, ns))} bricks at 0.999 and 1.001 x the closed-form "
                    "critical shift)", "LP decides stable / unstable",
                    f"stable below and unstable above the closed form for {good}/{len(ns)} stacks; LP (+ first QP) "
                    f"for {max(ns)} bricks {lp_ms:.0f} ms", rate_verdict(good, len(ns)) + f" ({good}/{len(ns)})", c2))
    out3 = []
    for shift in (0.95, 1.05):
        w = tb.scenes.build("overhang", solver="gauss", count=2, shift=shift)
        out3.append(tb.stability(w).stable)
    ok3 = out3 == [True, False]
    rows.append(row("§1 / Fig. 1 in 3-D (tb.stability, 8-edge friction cone): 2-brick harmonic overhang at 0.95 and "
                    "1.05 x the critical offsets", "stable / unstable",
                    f"0.95: {'stable' if out3[0] else 'unstable'}; 1.05: {'stable' if out3[1] else 'unstable'}",
                    _ok(ok3), c2))

    # --- Fig. 2: the 5 x 5 tower is unstable; the first QP gives the initial collapse (abstract, §1)
    rep = g.stability(g.bricks5x5())
    moving = np.nonzero(rep.moving)[0].tolist()
    alpha = np.abs(rep.angular_acceleration[moving])
    sym = bool(len(moving) and np.ptp(alpha) < 1e-9 * alpha.max())
    w3 = tb.scenes.build("bricks5x5", solver="gauss")
    un3 = not tb.stability(w3).stable
    st3 = tb.stability(tb.scenes.build("bricks5x5", solver="gauss", shift=0.0)).stable
    rows.append(row("Fig. 2: the 5 x 5 brick tower is unstable (LP infeasible); the first QP names the bricks that "
                    "start to move and the contacts that open", "unstable; initial collapse from one QP",
                    f"planar: {'unstable' if not rep.stable else 'stable'}, {len(moving)} bricks move {moving}, "
                    f"|angular acc.| {alpha.min():.4f}-{alpha.max():.4f} rad/s^2 (mirror pairs equal: {sym}), "
                    f"{int(rep.separating.sum())} of {len(rep.separating)} contacts open; 3-D scene bricks5x5: "
                    f"{'unstable' if un3 else 'stable'} (as straight columns: {'stable' if st3 else 'unstable'})",
                    _ok(not rep.stable and len(moving) > 0 and un3 and st3) + " (our tower geometry: Fig. 2's "
                    "exact layout is not given)", c2))
    # a closed form for the 'exact initial collapse': a cube tipping over an edge (3-D, first gauss QP)
    th = math.radians(30.0)
    w = tb.World(gravity=(0.0, 0.0, -9.81), solver="gauss")
    w.add_body(tb.Plane(), fixed=True, material=tb.Material(friction=0.8))
    q = (math.cos(th / 2), 0.0, math.sin(th / 2), 0.0)
    b = w.add_body(tb.Box(half_extents=(0.5, 0.5, 0.5)), position=(0, 0, 0.5 * (math.cos(th) + math.sin(th))),
                   orientation=q, mass=1.0, material=tb.Material(friction=0.8))
    r = tb.stability(w)
    lever = math.sqrt(0.5)
    exact = 9.81 * lever * math.sin(math.radians(15.0)) / (1 / 6 + lever * lever)
    got = abs(float(r.angular_acceleration[b][1]))
    rel = abs(got - exact) / exact
    rows.append(row("Abstract / §1: the first QP gives the exact initial (infinitesimal) collapse (3-D: unit cube on "
                    "one edge, tilted 30 deg, friction 0.8; closed form alpha = m g l sin 15 deg / (I + m l^2))",
                    "exact", f"alpha {got:.5f} rad/s^2 vs closed form {exact:.5f} (relative error {rel:.1e})",
                    _ok(not r.stable and rel < 1e-4) + f" (rel. error {rel:.1e})", c2))
    rows.append(row("Abstract / §1: initial collapse of the 5 x 5 tower against an independent rigid-body Gauss QP "
                    "(3 unknowns per brick, NNLS) (cited: test)", "exact",
                    "moving bricks and angular accelerations agree (see the test's oracle)", "reproduces",
                    "`pytest tests/papers/test_gauss_002.py`"))

    # --- Thm. 5.1: the position step equals the acceleration step
    s = g.overhang(5, 1.5 * crit)
    pos = g.simulate(s, 1, g.GaussSettings(dt=dt)).positions[-1]
    acc = g.simulate(s, 1, g.GaussSettings(dt=dt, method="acceleration")).positions[-1]
    d = float(np.abs(pos - acc).max())
    rows.append(row("Thm. 5.1: one position-based step (Fig. 7) gives the positions of the acceleration-based step "
                    "(Fig. 6) (first step from rest, 5-brick overhang at 1.5 x the critical shift)", "identical",
                    f"largest difference {d:.1e} m", _ok(d < 1e-12), c2))

    # --- Thm. 7.1 / Fig. 9 / §7: totally inelastic collisions without special handling
    ncol = c["collision_steps"]
    s = g.build_bricks([[0.0, 0.0], [1.3, 0.0]], mass=[1.0, 3.0])
    v0 = np.zeros_like(s.positions)
    v0[:4, 0] = 2.0
    traj = g.simulate(s, ncol, g.GaussSettings(gravity=0.0, dt=1e-2), initial_velocity=v0)
    v = (traj.positions[-1] - traj.positions[-2]) / 1e-2
    err2 = float(np.abs(v[:, 0] - 0.5).max())
    s = g.build_bricks([[0.0, 0.0], [1.2, 0.0], [2.2, 0.0]], mass=[1.0, 2.0, 1.0])
    v0 = np.zeros_like(s.positions)
    v0[:4, 0] = 4.0
    traj = g.simulate(s, max(ncol // 2, 2), g.GaussSettings(gravity=0.0, dt=1e-2), initial_velocity=v0)
    v = (traj.positions[-1] - traj.positions[-2]) / 1e-2
    err3 = float(np.abs(v[:, 0] - 1.0).max())
    rows.append(row("Thm. 7.1 / Fig. 9 / §7: the position step models totally inelastic collisions without special "
                    "handling; two isolated bodies get the textbook result (1 kg at 2 m/s onto 3 kg at rest, no "
                    "gravity)", "common velocity (m1 v1 + m2 v2) / (m1 + m2) = 0.5 m/s",
                    f"both leave at 0.5 m/s to {err2:.1e} m/s", _ok(err2 < 1e-9), c2))
    rows.append(row("§7 conjecture: (Q*) is the inelastic multi-body collision (chain of 3 touching bodies 1, 2, 1 kg, "
                    "the first at 4 m/s)", "conjectured: all move on together (total momentum / total mass = 1 m/s)",
                    f"all at 1 m/s to {err3:.1e} m/s", _ok(err3 < 1e-9) + " (the momentum-conserving common "
                    "velocity; the paper offers no physical derivation and neither do we)", c2))

    # --- §5 / §8.3: the position loop needs no drift correction; (L'') does not accumulate length errors
    nd = c["drift_steps"]
    s = g.overhang(4, 2.0 * crit)
    lp = _length_error(s, g.simulate(s, nd, g.GaussSettings(dt=dt)).positions)
    la = _length_error(s, g.simulate(s, nd, g.GaussSettings(dt=dt, method="acceleration")).positions)
    rows.append(row(f"§5 / §8.3: the position step (L'') keeps bar lengths without a correction step (d); the "
                    f"acceleration loop (Fig. 6) drifts (tipping 4-brick overhang, {nd} steps of 2 ms)",
                    "position-based: no drift correction needed",
                    f"largest bar length error {lp:.1e} m (position, (L'')) vs {la:.1e} m (Fig. 6 loop, no step (d))",
                    _ok(lp < la) + f" ({la / max(lp, 1e-300):.0f}x smaller)", c2))

    # --- §8.3 timing + Fig. 11 (5 x 5 tower, 1000 position steps): CPLEX numbers are not comparable
    nt = c["tower_steps"]
    s5 = g.bricks5x5()
    mark, t0 = cpu_mark(), time.perf_counter()
    tp = g.simulate(s5, nt, g.GaussSettings(dt=dt, qp=g.QPSettings(solver="clarabel", tol=1e-10, polish=True)))
    wall = time.perf_counter() - t0
    busy = other_cores(mark, wall)
    k = max(1, min(50, nt // 5))
    early, late = 1e3 * tp.qp_seconds[:k].mean(), 1e3 * tp.qp_seconds[-k:].mean()
    rows.append(row(f"§8.3: 5 x 5 tower, {nt} time steps (1000 in the paper): wall time (Clarabel + polish, sparse "
                    "assembly in Python)", "1000 steps ~5 min on a moderate workstation (CPLEX)",
                    f"{wall:.1f} s for {nt} steps ({1e3 * wall / nt:.1f} ms/step); other processes kept "
                    f"{busy:.2f} of the 2 cores busy", "not comparable (other hardware and QP solver; ours is "
                    f"~{300 / (wall * 1000 / nt):.0f}x faster per step)", c2))
    rows.append(row("§8.3: time per QP early on, and later when the tower has dispersed", "~1/3 s early; "
                    "a small fraction of that later", f"{early:.2f} ms per QP over the first {k} steps, {late:.2f} ms "
                    f"over the last {k}; rows {tp.n_rows[:k].mean():.0f} -> {tp.n_rows[-k:].mean():.0f}",
                    ("reproduces (the later QPs are cheaper" if late < early else
                     f"does not (the later QPs take {late / early:.2f}x the early time: the tower has not dispersed "
                     f"into separate pieces after {nt * dt:g} s, the bricks lie on the ground and on each other and "
                     "keep their contact rows") + "; the absolute times are not comparable: other hardware)", c2))
    s5m = g.bricks5x5()
    tnp = g.simulate(s5m, nt, g.GaussSettings(dt=dt, qp=g.QPSettings(solver="clarabel", tol=1e-10, polish=False)))
    asym_np, asym_p = float(tnp.mirror_error.max()), float(tp.mirror_error.max())
    rows.append(row(f"Fig. 11 / footnote 3: an interior-point (barrier) QP solver's stopping tolerance breaks the "
                    f"mirror symmetry of the collapse ({nt} steps)", "gross asymmetry towards the end",
                    f"largest |p - mirror(p)|: Clarabel (interior point) without polish {asym_np:.1e} m; with the "
                    f"active-set polish {asym_p:.1e} m",
                    _ok(asym_np > 1e-3 and asym_p < 1e-6) + " (and an exact polish removes it)", c2))
    lp5 = _length_error(s5, tp.positions)
    pen5 = -min(0.0, float(tp.positions[:, :, 1].min()))
    rows.append(row(f"Fig. 11: the collapse of the 5 x 5 tower as a sequence of convex QPs ({nt} steps, dt 2 ms, "
                    "four corner masses per brick as in the animation, no friction)", "animation (no numbers)",
                    f"every QP solved; bar length error {lp5:.1e} m; deepest point below the ground {pen5:.1e} m; "
                    f"mean {tp.n_rows.mean():.0f} constraint rows", "not comparable (the paper gives only "
                    "snapshots; our tower layout is not Fig. 2's, which is not given)", c2))
    ta = g.simulate(s5, nt, g.GaussSettings(dt=dt, method="acceleration", qp=g.QPSettings(solver="osqp")))
    la5, lp5 = _length_error(s5, ta.positions), _length_error(s5, tp.positions)
    pa5 = -min(0.0, float(ta.positions[:, :, 1].min()))
    rows.append(row(f"§5: on the tower the acceleration loop (Fig. 6 with the (Q*) impacts, no step (d)) drifts, the "
                    f"position loop (Fig. 7) does not ({nt} steps)", "Fig. 6 needs step (d); Fig. 7 does not",
                    f"Fig. 6: bar length error {la5:.1e} m, ground penetration {pa5:.1e} m; Fig. 7: {lp5:.1e} m, "
                    f"{pen5:.1e} m", _ok(la5 > lp5) + f" (length error {la5 / max(lp5, 1e-300):.0f}x larger "
                    "without step (d))", c2))

    # --- §8.1 / Fig. 10: 9 point masses have the rectangle's moments; §8.2: 18 variables, 16 bars, 1 redundant
    W, H, M = 1.0, 0.5, 1.0
    pts, m, bars = brick_layout("nine", W, H, M)
    mom = np.array([[m @ f(pts[:, 0], pts[:, 1]) for f in (lambda x, y: np.ones_like(x), lambda x, y: x,
                                                           lambda x, y: y, lambda x, y: x * x,
                                                           lambda x, y: x * y, lambda x, y: y * y)]])
    exact_m = np.array([M, 0.0, 0.0, M * W * W / 12, 0.0, M * H * H / 12])
    merr = float(np.abs(mom - exact_m).max())
    rows.append(row("§8.1 / Fig. 10: 9 point masses reproduce a homogeneous rectangle for f = 1, x, y, x^2, xy, y^2",
                    "exact for all six", f"largest moment error {merr:.1e} (1 m x 0.5 m, 1 kg)", _ok(merr < 1e-12), c2))
    rank = int(np.linalg.matrix_rank(rigidity_matrix(pts, bars)))
    rows.append(row("§8.2 / Fig. 10: the 9-point brick has 18 variables and 16 bar equations, one redundant",
                    "18 variables, 16 equations, 1 redundant", f"{2 * len(pts)} variables, {len(bars)} bars, rigidity "
                    f"matrix rank {rank} (= 2 x 9 - 3 = 15: {len(bars) - rank} redundant)",
                    _ok(2 * len(pts) == 18 and len(bars) == 16 and len(bars) - rank == 1), c2))

    # --- §8.4: redundant bars as a penalty term, M = 100
    npn = c["penalty_steps"]
    sp_ = g.bricks5x5(bars="penalty")
    t0 = time.perf_counter()
    tpen = g.simulate(sp_, npn, g.GaussSettings(dt=dt, qp=g.QPSettings(solver="osqp", tol=1e-10)))
    wpen = time.perf_counter() - t0
    lpen = _length_error(sp_, tpen.positions)
    rows.append(row(f"§8.4: all bars (both diagonals) as a penalty M = 100 instead of equalities (5 x 5 tower, "
                    f"{npn} steps)", "runs; avoids inconsistent equalities (no number given)",
                    f"bar length error {lpen:.1e} m vs {_length_error(s5, tp.positions[:npn + 1]):.1e} m with "
                    f"hard minimally rigid bars; asymmetry with OSQP {float(tpen.mirror_error.max()):.1e} m; "
                    f"{wpen:.1f} s", "partly (it runs and keeps lengths to " + f"{lpen:.0e} m; the paper gives no "
                    "number to compare, and hard redundant equalities were not tried: we remove them)", c2))

    # footnote 3: the asymmetry is not caused by the single diagonal (both diagonals, as penalty bars)
    def first_solved(configs):
        """The first (label, trajectory) of ``configs`` whose QPs all solve, and the failures before it."""
        failed = []
        for label, qp in configs:
            try:
                return label, g.simulate(g.bricks5x5(bars="penalty"), npn, g.GaussSettings(dt=dt, qp=qp)), failed
            except tb.SimulationError as e:
                failed.append(f"{label} stops: {str(e).partition('status=')[2] or e}")
        return None, None, failed

    lab_n, tpn, fail_n = first_solved([
        ("Clarabel, no polish", g.QPSettings(solver="clarabel", tol=1e-10, polish=False)),
        ("OSQP 1e-6, no polish", g.QPSettings(solver="osqp", tol=1e-6, polish=False))])
    lab_p, tpp, fail_p = first_solved([("Clarabel + polish", g.QPSettings(solver="clarabel", tol=1e-10, polish=True)),
                                       ("OSQP 1e-10 + polish", g.QPSettings(solver="osqp", tol=1e-10, polish=True))])
    a_1 = float(tnp.mirror_error[:npn + 1].max())
    fails = "; ".join(fail_n + fail_p)
    if tpn is None or tpp is None:
        rows.append(row(f"Footnote 3: the asymmetry persists with both diagonals (§8.4 penalty bars, {npn} steps)",
                        "persists with both diagonals", f"no back end solved every QP: {fails}",
                        "does not (the QPs of the all-penalty tower were not solved)", c2))
    else:
        a_n, a_p = float(tpn.mirror_error.max()), float(tpp.mirror_error.max())
        rows.append(row(f"Footnote 3: the asymmetry is not due to inserting one diagonal only: it persists with both "
                        f"(both diagonals as §8.4 penalty bars, {npn} steps)", "persists with both diagonals",
                        f"largest |p - mirror(p)|: {lab_n} {a_n:.1e} m with both diagonals (Clarabel without polish, "
                        f"one diagonal: {a_1:.1e} m); {lab_p} {a_p:.1e} m"
                        + (f"; failed first: {fails}" if fails else ""),
                        _ok(a_n > 1e-6) + f" (asymmetric by {a_n:.0e} m with both diagonals, against ~1e-11 m for "
                        f"the exactly solved one-diagonal tower; here the asymmetry survives the polish too, {a_p:.0e} "
                        "m, so with penalty bars the barrier tolerance is not its only cause)", c2))

    # --- §8.5: the critical separating edge
    rows.append(row("§8.5: one critical separating edge per pair of bricks, all vertices of the other brick "
                    "constrained against its line, prevents overlap (cited: design note)",
                    "works for all convex polygons",
                    "not run as written: for offset face-to-face contact (every overhang) the line constraint "
                    "forbids tipping about the lower brick's corner; tumble keeps both best edges when they tie "
                    "(1e-9 m) and only vertices that project onto the edge",
                    "not comparable (the paper's rule was replaced, not measured)",
                    "`make bench-gauss` (gauss2d.md, 'Not reproduced')"))

    # --- Outlook: the extension to 3-D is straightforward (tumble's gauss solver in the 3-D World)
    secs = c["world_seconds"]
    _, r, ms = run_scene("stack10", secs, solver="gauss")
    rows.append(row(f"§1 Outlook: the extension to three dimensions is straightforward (gauss solver, stack10, "
                    f"{secs:g} s, with friction)", "straightforward (not done in the paper)",
                    f"{'stands' if r['standing'] else 'falls'}, max drift {r['max_drift']:.1e} m, max penetration "
                    f"{r['max_penetration']:.1e} m, {ms:.1f} ms/step", _ok(bool(r["standing"])) +
                    " (3-D, with a K-edge friction cone the paper leaves out)", c2))
    rows.append(row("§1 Outlook in 3-D on larger structures: pyramid20, wall200, 2 s (cited)", "-",
                    "gauss stands with drift < 1e-13 m on both; 681 / 419 ms per step (8-edge cone) vs shock 97 / 68 "
                    "ms, pgs 24 / 9 ms (pgs topples wall200)", "reproduces (both stand to < 1e-13 m; a gauss step "
                    "costs 6-7x a shock step and 28-45x a pgs step)", "`make bench-gauss` (gauss_world.md)"))

    # --- §8.2: points with many variables vs rigid bodies with few
    rows.append(row("§8.2: not a priori clear whether the sparse point model (18 variables per brick) is slower than "
                    "3 rigid-body variables per brick (cited)", "open question",
                    "planar point model (8 variables per brick, corners4): 0.8 ms per QP (5 bricks) to 432 ms (500 "
                    "bricks, Clarabel), 21 iterations at every size; the 3-D rigid-body solver is not the same problem",
                    "not comparable (no rigid-body planar QP of the same towers timed)",
                    "`make bench-gauss` (gauss2d.md table 2)"))
    # --- §9: the static problem as an LP
    rows.append(row("§9: the right part of Fig. 2 (minimum potential energy, no sliding) is an LP", "LP (not "
                    "implemented in the paper)", "not implemented", "not comparable (not implemented here either)",
                    "-"))
    notes.append("Planar rows use `tumble.gauss2d`: bricks 1 m x 0.5 m, 1 kg as four corner masses (the paper's "
                 "animation, footnote 3), minimally rigid bars, no friction, dt 2 ms, Clarabel or OSQP with an "
                 "active-set polish instead of CPLEX. 3-D rows use `tb.stability` and the `gauss` solver.")
    notes.append("The right-hand side of (S') is garbled in our copy of the paper; tumble uses the term that "
                 "Thm. 5.1 maps (S2*) to (see gauss2d.md).")
    return rows, notes


# ================================================================================================
# 003 Liesenfeld & Stolfi 1996, elastic bodies of tetrahedral finite elements (tb.elastic)

P003_FULL = {"cylinder_seconds": 1.0, "stiff_seconds": 0.3, "stiff_k": (2e4, 2e7), "pile": True,
             "constraint_seconds": 0.5, "accuracy_seconds": 0.5, "scaling": (500, 2000, 5000, 15000)}
P003_QUICK = {**P003_FULL, "stiff_seconds": 0.1, "stiff_k": (2e4, 2e6), "constraint_seconds": 0.1,
              "accuracy_seconds": 0.1, "scaling": (500, 5000)}


def _surface_pairs(system) -> tuple[int, int, int, int, int]:
    """(surface triangles, surface edges, surface vertices, edge-edge pairs, vertex-face pairs) over the whole
    scene, counting every pair that shares no vertex (the brute-force test set of 003 §6.3)."""
    tris = []
    for k, body in enumerate(system.bodies):
        tris.append(np.asarray(body.mesh.surface) + system.body_vertex_start[k])
    tri = np.vstack(tris)
    edges = np.unique(np.sort(tri[:, [[0, 1], [1, 2], [2, 0]]].reshape(-1, 2), axis=1), axis=0)
    verts = np.unique(tri)
    ne, nf, nv = len(edges), len(tri), len(verts)
    inc = np.zeros(int(tri.max()) + 1, dtype=np.int64)   # edges and faces at each vertex
    np.add.at(inc, edges.ravel(), 1)
    adjacent_ee = int(sum(d * (d - 1) // 2 for d in inc))   # edge pairs sharing a vertex (two edges share <= 1)
    finc = np.zeros_like(inc)
    np.add.at(finc, tri.ravel(), 1)
    ee = ne * (ne - 1) // 2 - adjacent_ee
    vf = nv * nf - int(finc.sum())
    return nf, ne, nv, ee, vf


def paper_003(quick: bool, cfg: dict | None = None) -> tuple[list[dict], list[str]]:
    """Paper 003 (viscoelastic tetrahedral FEM, RKF 4(5), contact springs): the §9 rubber cylinders and the
    property checks are measured here; experiments are benchmarks/fem.py's functions on smaller budgets."""
    from benchmarks import fem

    from tumble.elastic.energy import energy_density

    c = {**(P003_QUICK if quick else P003_FULL), **(cfg or {})}
    rows, notes = [], []
    c3 = cmd("003")

    # --- §9: the scene
    fem.rubber_cylinders("rkf45", tol=1e-3)  # loads the kernels
    t0 = time.perf_counter()
    system = fem.rubber_cylinders("rkf45", tol=1e-3)
    build = time.perf_counter() - t0
    nf, ne, nv, ee, vf = _surface_pairs(system)
    nt, nvert = len(system.tets), len(system.positions)
    rows.append(row("§9: two soft rubber cylinders on a hard floor: 462 tetrahedra, 191 vertices, 334 exposed "
                    "triangles", "462 / 191 / 334", f"{nt} / {nvert} / {nf} (`rubber_cylinders` in benchmarks/fem.py)",
                    ("partly" if nt == 462 else "does not") + f" (tets equal; vertices {nvert - 191:+d}, surface "
                    f"triangles {nf - 334:+d}: the paper's mesh, sizes and material are not given)", c3))
    rows.append(row("§9: building and factoring the mass matrix", "6 min on a SPARC 1000",
                    f"{1e3 * build:.0f} ms (whole system build, sparse LU of M)",
                    "not comparable (1996 hardware)", c3))

    # --- §9: 1 s of simulated time under RKF 4(5) at 1 mm tolerance
    secs = c["cylinder_seconds"]
    mark, t0 = cpu_mark(), time.perf_counter()
    r = fem.run_cylinders("rkf45", 0.01, secs, tol=1e-3)
    busy = other_cores(mark, time.perf_counter() - t0)
    cnt = r["counters"]
    steps = cnt["steps_taken"]
    per_s = steps / secs
    rows.append(row(f"§9: RKF 4(5) steps for 1 s of the fall ({secs:g} s simulated, tol 1 mm)",
                    "6650 steps, 150 us of simulated time each on average",
                    f"{steps} steps ({cnt['steps_rejected']} rejected), {1e6 * r['mean_step_s']:.0f} us on average",
                    ("partly" if 6650 / 3 < per_s < 6650 * 3 else "does not") +
                    f" (same order: {per_s:.0f} vs 6650 steps per simulated second; our scene's constants are "
                    "not the paper's)", c3))
    rows.append(row("§9: wall time of the simulation and CPU time per step", "1 h 5 min (3900 x real time); 0.58 s "
                    "CPU per step (SPARC 1000)", f"{r['wall_s']:.1f} s for {secs:g} s ({r['wall_s'] / secs:.1f} x real "
                    f"time); {1e3 * r['wall_s'] / max(steps, 1):.2f} ms per step; other processes kept {busy:.2f} "
                    "of the 2 cores busy", "not comparable (1996 hardware; ours "
                    f"~{580 / max(1e3 * r['wall_s'] / max(steps, 1), 1e-9):.0f}x faster per step)", c3))
    rows.append(row("§9: collisions detected during the run", "140",
                    f"{cnt['springs_created']} contact springs tied, {cnt['event_truncations']} event cuts (floor "
                    "contacts only: our cylinders do not meet each other)",
                    "partly (same order; the paper's cylinders may have hit each other)", c3))
    rows.append(row("§9: pairs tested for collision: 120,000 edge-edge and 57,000 vertex-face",
                    "120,000 / 57,000", f"all vertex-disjoint pairs of our surface ({ne} edges, {nv} vertices, {nf} "
                    f"triangles): {ee:,} edge-edge, {vf:,} vertex-face",
                    "partly (the paper's counts are the brute-force pair counts of a surface of its size: ours are "
                    f"{ee / 120000:.2f}x and {vf / 57000:.2f}x; our sweep and prune tests only the pairs whose "
                    "swept boxes overlap)", c3))
    psi_ratio = energy_density(np.diag([1e-3, 1, 1]), 1e6, 3e5) / energy_density(np.diag([0.5, 1, 1]), 1e6, 3e5)
    rows.append(row("§4.1: the energy goes to infinity as a tet's volume goes to zero, so no tet inverts "
                    f"(smallest det C over the {secs:g} s run)", "no tet turns inside out",
                    f"min det C {cnt['min_volume_ratio']:.3f}; psi(J = 1e-3) / psi(J = 0.5) = {psi_ratio:.0f}",
                    _ok(cnt["min_volume_ratio"] > 0), c3))
    # §10: the steps are small because of the contact springs
    cap = r["max_step_s"]
    rows.append(row("§10: the contact springs make the equation stiff: steps ~100 us at 1 mm tolerance",
                    "~100 us steps, caused by the contact springs",
                    f"mean step {1e6 * r['mean_step_s']:.0f} us at k = 2e4 N/m; the elastic stability cap "
                    f"(max_step auto, springs included) is {1e6 * cap:.0f} us" if cap else
                    f"mean step {1e6 * r['mean_step_s']:.0f} us",
                    "does not (our steps sit at the elastic stability cap, not below it: at this contact stiffness "
                    "the springs are not what limits them; see the next row for stiffer springs)", c3))
    # stiff contact: RKF against backward Euler
    ss, ks = c["stiff_seconds"], c["stiff_k"]
    stiff = {}
    for k in ks:
        for integ, dtc, st in (("rkf45", 0.01, {"tol": 1e-3}), ("implicit", 1e-3, {})):
            rr = fem.run_cylinders(integ, dtc, ss, contact_stiffness=k, **st)
            stiff[(k, integ)] = rr
            log(f"003 stiff k={k:g} {integ}: {rr['wall_s']:.1f} s, {rr['counters']['steps_taken']} steps")
    cells = "; ".join(f"k {k:g}: RKF {stiff[(k, 'rkf45')]['counters']['steps_taken']} steps "
                      f"({1e6 * stiff[(k, 'rkf45')]['mean_step_s']:.0f} us) {stiff[(k, 'rkf45')]['wall_s']:.1f} s, "
                      f"implicit {stiff[(k, 'implicit')]['counters']['steps_taken']} steps "
                      f"{stiff[(k, 'implicit')]['wall_s']:.1f} s" for k in ks)
    lo, hi = stiff[(ks[0], "rkf45")], stiff[(ks[-1], "rkf45")]
    lo_steps = lo["counters"]["steps_taken"]
    grows = hi["counters"]["steps_taken"] > 1.5 * lo_steps
    rows.append(row(f"§10: stiff contact springs force small explicit steps (cylinders, {ss:g} s, contact "
                    f"stiffness {' and '.join(f'{k:g}' for k in ks)} N/m); the paper proposes to replace them",
                    "step size limited by the springs", cells,
                    _ok(grows) + f" (RKF steps x{hi['counters']['steps_taken'] / max(lo_steps, 1):.1f} "
                    f"for k x{ks[-1] / ks[0]:g}; the paper's proposed remedy, impulses and equality constraints, is "
                    "not ours: backward Euler keeps its step count)", c3))

    # --- §8.1: the mass matrix
    edges = np.unique(np.sort(system.tets[:, [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]].reshape(-1, 2),
                              axis=1), axis=0)
    nnz3, paper_nnz = 3 * system.mass.matrix.nnz, 3 * nvert + 6 * len(edges)
    Mx = system.mass.matrix.toarray()
    sym = float(np.abs(Mx - Mx.T).max())
    eig_min = float(np.linalg.eigvalsh(0.5 * (Mx + Mx.T)).min())
    rows.append(row("§8.1: M is constant, symmetric positive definite, with exactly 3 nv + 6 ne non-zeros",
                    "3 nv + 6 ne", f"{nnz3} non-zeros vs 3 nv + 6 ne = {paper_nnz}; largest |M - M^T| {sym:.0e} kg; "
                    f"smallest eigenvalue {eig_min:.2e} kg",
                    _ok(nnz3 == paper_nnz and sym <= 1e-12 * np.abs(Mx).max() and eig_min > 0), c3))
    # eq. 18: kinetic energy of a tet
    rng = np.random.default_rng(1)
    v = rng.standard_normal((nvert, 3))
    k_ours = 0.5 * float(np.einsum("ix,ix->", v, Mx @ v))
    mu = system.rest_volume * fem.RUBBER.density
    vt = v[system.tets]  # (T, 4, 3)
    sq = np.einsum("tix,tix->t", vt, vt)
    cross = sum(np.einsum("tx,tx->t", vt[:, i], vt[:, j]) for i in range(4) for j in range(i))
    k_paper = float(np.sum(mu / 20.0 * (sq + cross)))
    rel = abs(k_ours - k_paper) / k_paper
    rows.append(row("§5.2 eq. 18: kinetic energy of a tet mu/20 (sum v_i^2 + sum_{j<i} v_i . v_j) (random vertex "
                    "velocities on the cylinder mesh)", "eq. 18", f"1/2 v^T M v = {k_ours:.6g} J vs eq. 18 "
                    f"{k_paper:.6g} J (relative difference {rel:.1e})", _ok(rel < 1e-12), c3))
    # §8.1: cost practically linear in n
    sc = []
    for target in c["scaling"]:
        mesh = fem.box_of_tets(target)
        sysb = fem.ElasticSystem([fem.ElasticBody(mesh, fem.RUBBER, position=(0.0, 0.0, 1.0))])
        x = sysb.positions + 1e-4 * rng.standard_normal(sysb.positions.shape)
        vv = 1e-2 * rng.standard_normal(sysb.positions.shape)
        sysb._derivative(0.0, x, vv)
        rep = max(3, int(5e4 / mesh.tet_count))
        t0 = time.perf_counter()
        for _ in range(rep):
            sysb._derivative(0.0, x, vv)
        sc.append((mesh.tet_count, 1e6 * (time.perf_counter() - t0) / rep / mesh.tet_count))
    ratio = sc[-1][1] / sc[0][1]
    rows.append(row("§8.1: with a sparse LDL^T factor the cost of the accelerations is practically linear in n "
                    "(one force + mass-solve evaluation on boxes of tets)", "practically linear",
                    ", ".join(f"{n} tets: {u:.2f} us/tet" for n, u in sc),
                    ("reproduces" if ratio < 1.5 else "partly") + f" (cost per tet x{ratio:.1f} over "
                    f"{sc[-1][0] / sc[0][0]:.0f}x the tets)", c3))

    # --- §8.3: RKF 4(5) keeps the error below the tolerance (pinned cantilever against a tol 1e-9 reference)
    asec = c["accuracy_seconds"]
    ref, _ = fem.tip_track(fem.swinging_cantilever("rkf45", tol=1e-9), asec, 0.01)
    errs = []
    for tol in (1e-3, 1e-5):
        tr, wl = fem.tip_track(fem.swinging_cantilever("rkf45", tol=tol), asec, 0.01)
        errs.append((tol, float(np.abs(tr - ref).max()), wl))
    rows.append(row(f"§8.3: adaptive RKF 4(5) keeps the truncation error below a user tolerance (pinned soft "
                    f"cantilever swinging {asec:g} s, tip against tol 1e-9 m)", "error below the tolerance",
                    "; ".join(f"tol {t:g} m: tip error {e:.1e} m ({w:.2f} s)" for t, e, w in errs),
                    _ok(all(e < t for t, e, _ in errs)) + " (far below: the elastic stability cap on the step, "
                    "not the tolerance, sets the step here)", c3))
    # --- §3.1-3.3: springs vs Lagrange multipliers for equality constraints
    csec = c["constraint_seconds"]
    cres = []
    for method, k in (("lagrange", None), ("springs", 1e4), ("springs", 1e6)):
        st = {"tol": 1e-5, "constraint_method": method}
        if k is not None:
            st["constraint_stiffness"] = k
        sysc = fem.swinging_cantilever("rkf45", **st)
        worst = 0.0
        while sysc.time < csec - 1e-12:
            sysc.step(0.01)
            worst = max(worst, sysc.constraint_violation())
        cres.append((method, k, worst, sysc.steps_taken))
    lag, s4, s6 = cres
    ok = lag[2] < 1e-9 and s6[2] < s4[2] and s6[3] > s4[3]
    rows.append(row(f"§3.1-3.3: constraint springs are violated (less as k grows) and make the equation stiff; "
                    f"Lagrange multipliers hold the constraint exactly (pinned cantilever, {csec:g} s)",
                    "springs: small violation, unstable when stiff; multipliers: exact",
                    "; ".join(f"{m}{'' if k is None else f' k {k:g}'}: violation {wv:.1e} m, {n} steps"
                              for m, k, wv, n in cres), _ok(ok), c3))

    # --- §6.3 / §7.2: elastic on elastic (pile of three jelly cubes): collision share of the time, penetration
    if c["pile"]:
        fem.run_pile("rkf45", True)  # warm-up: the body-contact kernels load (or compile) outside the timed run
        pr = fem.run_pile("rkf45", quick)
        share = pr["event_share"]
        if 0.5 <= share <= 0.8:
            pv = "reproduces"
        elif 0.33 <= share <= 0.9:
            pv = "partly"
        else:
            pv = "does not"
        pv += f" ({100 * share:.0f} % vs ~67 %" + ("; our sweep and prune and event kernels are cheap next to the "
                                                  "force evaluations)" if share < 0.5 else ")")
        rows.append(row(f"§9 / §6.3: about 2/3 of the time goes to collision tests (three jelly cubes piled, "
                        f"{pr['seconds']:g} s, RKF)", "~2/3 collisions, ~1/3 accelerations",
                        f"vertex-face and edge-edge event tests take {100 * pr['event_share']:.0f} % of the wall "
                        f"time ({pr['wall_s']:.1f} s)",
                        pv, c3))
        rows.append(row("§7.2: contact springs keep interpenetration slight if stiff enough (same pile)",
                        "slight, hardly noticeable", f"deepest vertex inside a neighbour {1e3 * pr['deepest_m']:.2f} "
                        f"mm (cube 100 mm); {pr['pair_springs_created']} pair springs tied; lowest floor vertex of the "
                        f"cylinders {1e3 * r['lowest_vertex_m']:.2f} mm", _ok(pr["deepest_m"] < 2e-3) +
                        " (below 2 % of the cube)", c3))
    rows.append(row("§6.2: event detection by cubic Hermite interpolation in Bernstein form with bisection finds the "
                    "first crossing (cited: tests)", "first zero of the condition",
                    "closed-form cases: vertex through a still triangle at u = 0.75, edge across edge at u = 0.8 "
                    "(to the bisection tolerance, from the left); a miss beside the triangle", "reproduces",
                    "`pytest tests/unit/test_elastic_body_events.py`"))
    rows.append(row("§4.1: for small deformations the energy reduces to Hooke's law with alpha, beta the bulk and "
                    "shear moduli (cited: tests)", "Hooke", "volumetric strain e: K/2 e^2, shear gamma: mu/2 gamma^2, "
                    "to 1e-3 relative", "reproduces", "`pytest tests/unit/test_elastic_energy.py`"))
    notes.append("The scene constants (sizes, rubber K = 1 MPa, mu = 0.3 MPa, contact stiffness 2e4 N/m, poses) are "
                 "ours: the paper gives none. Eq. 15 and 16 are garbled in our copy; tumble's reconstruction is "
                 "documented in tumble/elastic/energy.py and fem.md.")
    notes.append("Timing rows are taken on a shared 2-core machine; the other-cores figure says how busy it was.")
    return rows, notes


# ================================================================================================

TITLES = {"000": "Erleben 2007, velocity-based shock propagation (paper 000)",
          "001": "Catto 2005, iterative dynamics with temporal coherence (paper 001)",
          "002": "Gauss' principle of least constraint for brick towers (paper 002)",
          "003": "Liesenfeld & Stolfi 1996, dynamic animation of elastic bodies (paper 003)",
          "004": "Schornbaum 2009, impulse-based collision response (thesis 004)"}
RUNNERS = {"000": paper_000, "001": paper_001, "002": paper_002, "003": paper_003, "004": paper_004}


def main(argv=None) -> int:
    ap = benchmark_arguments(__doc__.splitlines()[0], "fewer starts, shorter runs", "Numba threads")
    ap.add_argument("--papers", default=",".join(RUNNERS), help="comma-separated: " + ",".join(RUNNERS))
    ap.add_argument("--rows", default="", help="paper 000 only: comma-separated sections to run alone "
                    "(splitting: §3-3.2, Figs. 5-7); writes paper_000_<sections>.md and leaves paper_000.md "
                    "and papers.json alone")
    args = ap.parse_args(argv)
    start = start_run(args)
    only = {x.strip() for x in args.rows.split(",") if x.strip()} or None
    papers = [p.strip() for p in args.papers.split(",") if p.strip()]
    start.out.mkdir(parents=True, exist_ok=True)
    all_rows = {}
    for p in papers:
        t0 = time.perf_counter()
        if p == "000":
            rows, notes = paper_000(args.quick, only=only, figure_dir=start.out)
        else:
            rows, notes = RUNNERS[p](args.quick)
        wall = time.perf_counter() - t0
        meta = run_meta(start, SCRIPT, argv, args.quick, papers=papers)
        lines = [f"# {TITLES[p]}: claims, the paper's number, ours", "",
                 *setup_lines(meta, "fewer starts, shorter runs"),
                 f"- this paper's rows: {wall:.0f} s of wall time", "",
                 "Verdicts: reproduces / partly / does not, with the measured reason. A row marked (cited) quotes "
                 "a committed result file or test and names the command that produced it.", "",
                 md_table(["claim / figure", "paper", "ours", "verdict", "command"],
                          [[r["claim"], r["paper"], r["ours"], r["verdict"], r["command"]] for r in rows]), "",
                 "## Notes", "", *[f"- {n}" for n in notes], ""]
        part = "" if only is None or p != "000" else "_" + "_".join(sorted(only))
        path = start.out / f"paper_{p}{part}.md"
        path.write_text("\n".join(lines))
        all_rows[p] = {"rows": rows, "notes": notes, "wall_s": wall}
        print(path)
    if only is not None:
        return 0  # a part of paper 000's rows: no papers.json entry
    # one papers.json: a run of some papers replaces their entries and keeps the others'
    jpath = start.out / "papers.json"
    old = json.loads(jpath.read_text()) if jpath.exists() else {"meta": {}, "papers": {}}
    meta = run_meta(start, SCRIPT, argv, args.quick, papers=papers)
    for p in papers:
        all_rows[p]["meta"] = meta
    old["papers"].update(all_rows)
    old["meta"] = meta
    write_json(jpath, old)
    return 0


if __name__ == "__main__":
    sys.exit(main())
