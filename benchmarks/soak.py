"""Soak test (issue 17): a long run of `pile1000` (1000 spheres in an open box) under each solver,
checking that memory and energy stay bounded. Writes benchmarks/results/<machine>/soak.md and .json.

    .venv/bin/python benchmarks/soak.py [--steps N] [--solvers pgs,shock] [--jobs J] [--quick]

``--jobs J`` runs up to J solvers at once, each in its own process (so each solver's memory is its own
process's): 10^5 steps of the four pile solvers take about 25 min on two cores with ``--jobs 2
--threads 1`` instead of about 50 min one after the other (shock alone is about half of it).

Every ``--sample`` steps it records the process's resident memory (``/proc/self/statm``; the peak from
``resource``), the world's total energy (kinetic + potential) [J], its kinetic energy, the deepest
overlap and the wall time. Verdicts per solver:

* memory bounded: resident memory grows by less than ``MEMORY_SLACK_MB`` from the sample at 10 % of
  the run to the end (the first steps load and compile the solver's kernels and grow the stores to the
  pile's contact count; a leak of one small array per step would add > 100 MB over 10^5 steps);
* energy bounded: the total energy never exceeds its start (the pile only falls and dissipates) by
  more than ``ENERGY_SLACK`` of the initial potential energy above the floor, and the kinetic energy
  of the spheres inside the box at the end is below ``REST_KE_J`` (the pile has come to rest). The
  resting pile reaches the walls' top (2 m; pgs: highest centre 1.997 m), so a sphere can roll over
  a wall; outside, with no rolling resistance in the model, it rolls on for ever (measured under
  shock: one sphere over the wall at step 53, rolling at 0.80 m/s, 1.94 J, for good). Such spheres
  are counted ('escaped') and their energy reported, not judged;
* every state finite (a ``SimulationError`` ends the solver's run and is reported).

``--checkpoint DIR`` lets a soak outlive its process: every tenth sample the world's
``save_state()`` snapshot, the samples so far and the wall time spent are pickled to
``DIR/<solver>.pkl``; a later run with the same ``--checkpoint`` (and ``--steps``) restores it and
goes on from that step. ``restore_state`` is exact (stepping after a restore is bit-identical,
``tests/unit/test_lifecycle*``), so the energies are those of one uninterrupted run. Memory is a
per-process quantity: each process's samples form a *segment*, and the memory verdict takes the
largest growth within any segment, from its first sample at least 10 % of the planned steps after the
process started (the warm-up an uninterrupted run gets: kernels load and the stores grow to the pile's
high-water mark; measured in the shock 10^5 run, resident memory rose for ~7500 steps after a start, then
stayed within 1 MB) to the segment's end. A segment shorter than the warm-up is not judged.
"""

from __future__ import annotations

import multiprocessing
import pickle
import resource
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.report import (  # noqa: E402
    benchmark_arguments,
    log,
    md_table,
    run_meta,
    set_numba_threads,
    setup_lines,
    start_run,
    write_json,
    write_markdown,
)

import tumble as tb  # noqa: E402

#: [MB] allowed growth of resident memory from the end of a process's warm-up to its end
MEMORY_SLACK_MB = 20.0
#: the warm-up not judged for memory, as a fraction of the planned steps, counted from each process's start
WARMUP_FRACTION = 0.1
#: allowed rise of the total energy above its start, as a fraction of the pile's potential energy
#: above its resting floor (E0 - E_floor); 0.01 = 1 %
ENERGY_SLACK = 0.01
#: [J] kinetic energy below which the 1000-sphere pile (about 4.2 kg each) counts as at rest
REST_KE_J = 1.0


def inside_box(w) -> np.ndarray:
    """Mask of the dynamic bodies whose centre lies over the pile's box (|x|, |y| < its half width)."""
    from tumble.scenes.library import PILE_HALF_WIDTH

    p = w.positions
    return (np.abs(p[:, 0]) < PILE_HALF_WIDTH) & (np.abs(p[:, 1]) < PILE_HALF_WIDTH) & ~np.asarray(w.fixed)


def kinetic_energy_of(w, mask: np.ndarray) -> float:
    """[J] 1/2 m v^2 + 1/2 w_b^T I_b w_b (body frame, as ``World.kinetic_energy``) of the bodies in ``mask``."""
    from tumble._core.math3d import quat_to_matrices

    b = w.bodies
    n = b.count
    v = b.body_linear_velocity[:n][mask]
    R = quat_to_matrices(b.body_orientation[:n][mask])
    wb = np.einsum("nji,nj->ni", R, b.body_angular_velocity[:n][mask])
    return float(0.5 * np.sum(b.body_mass[:n][mask] * np.einsum("ij,ij->i", v, v))
                 + 0.5 * np.einsum("ni,nij,nj->", wb, b.body_inertia_local[:n][mask], wb))


def rss_mb() -> float:
    """Resident set size of this process now [MB]."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def soak(solver: str, steps: int, sample: int, progress=None, checkpoint: Path | None = None,
         stop_after: int | None = None) -> dict:
    """``steps`` of pile1000 under ``solver``; ``progress(result)``, when given, gets the summary of the
    samples so far every tenth sample (so a long run cut short still leaves its report). With
    ``checkpoint`` (a folder) the run is saved there every tenth sample and resumed from it when a save
    for this solver and step count exists; ``stop_after`` (steps, for tests) ends this process's part
    early as an interruption would, after saving."""
    w = tb.scenes.build("pile1000", solver=solver)
    dt = w.default_dt
    e0 = w.total_energy()
    # the floor of the potential energy: every sphere resting on the ground (centre at z = r)
    m = w.masses
    r = 0.1
    e_floor = float(np.sum(m) * 9.81 * r)
    rows = []
    first, segment, wall_before = 0, 0, 0.0
    saved = None if checkpoint is None else Path(checkpoint) / f"{solver}.pkl"
    if saved is not None and saved.exists():
        with saved.open("rb") as f:
            run = pickle.load(f)
        if run["steps"] == steps and run["sample"] == sample:
            w.restore_state(run["state"])
            rows, first, wall_before = run["rows"], run["step"], run["wall_s"]
            segment = rows[-1]["segment"] + 1
            log(f"{solver}: resumed from {saved} at step {first} (segment {segment})")
    t0 = time.perf_counter()
    error = ""
    for k in range(first, steps + 1):
        if k % sample == 0 and not (rows and rows[-1]["step"] == k):
            rows.append({"step": k, "wall_s": wall_before + time.perf_counter() - t0, "rss_mb": rss_mb(),
                         "energy_j": w.total_energy(), "kinetic_j": w.kinetic_energy(),
                         "kinetic_inside_j": kinetic_energy_of(w, inside_box(w)),
                         "escaped": int(np.count_nonzero(~inside_box(w) & ~np.asarray(w.fixed))),
                         "max_penetration_m": float(w.counters.get("max_penetration", 0.0)), "segment": segment})
            if k and k % (10 * sample) == 0:
                log(f"{solver}: step {k}/{steps}, {rows[-1]['wall_s']:.0f} s, rss {rows[-1]['rss_mb']:.1f} MB, "
                    f"E {rows[-1]['energy_j']:.1f} J, KE {rows[-1]['kinetic_j']:.3g} J")
                if saved is not None and k < steps:
                    saved.parent.mkdir(parents=True, exist_ok=True)
                    tmp = saved.with_suffix(".tmp")
                    with tmp.open("wb") as f:
                        pickle.dump({"steps": steps, "sample": sample, "step": k, "rows": rows,
                                     "wall_s": rows[-1]["wall_s"], "state": w.save_state()}, f)
                    tmp.replace(saved)        # never a half-written checkpoint
                if progress is not None and k < steps:
                    progress(summary(solver, rows, dt, e0, e_floor, rows[-1]["wall_s"], "", steps))
                if stop_after is not None and k >= first + stop_after and k < steps:
                    break
        if k == steps:
            if saved is not None and saved.exists():
                saved.unlink()          # finished: a later run starts afresh
            break
        try:
            w.step(dt)
        except tb.SimulationError as e:
            error = str(e)
            break
    return summary(solver, rows, dt, e0, e_floor, wall_before + time.perf_counter() - t0, error, steps)


def summary(solver: str, rows: list[dict], dt: float, e0: float, e_floor: float, wall: float, error: str,
            planned: int) -> dict:
    """The verdicts of a soak from its samples (a run still going, or cut short, says how far it got)."""
    if not error and rows[-1]["step"] < planned:
        error = f"unfinished: {rows[-1]['step']} of {planned} steps so far"
    rss = np.array([x["rss_mb"] for x in rows])
    energy = np.array([x["energy_j"] for x in rows])
    # memory is per process: the largest growth within one process's samples (a segment), each from its
    # first sample WARMUP_FRACTION of the planned steps after the segment's start (the first steps load
    # kernels and grow the stores); a segment that ends inside its warm-up is not judged
    segments = np.array([x.get("segment", 0) for x in rows])
    steps_at = np.array([x["step"] for x in rows])
    growth, base, end = 0.0, len(rows) - 1, len(rows) - 1
    for seg in np.unique(segments):
        idx = np.flatnonzero(segments == seg)
        after = idx[steps_at[idx] >= steps_at[idx[0]] + WARMUP_FRACTION * planned]
        if len(after) and float(rss[idx[-1]] - rss[after[0]]) > growth:
            growth, base, end = float(rss[idx[-1]] - rss[after[0]]), int(after[0]), int(idx[-1])
    rise = float(np.max(energy) - e0)
    ok_memory = growth < MEMORY_SLACK_MB
    # rest is judged on the spheres in the box (rows of a soak from before this rule: all of them)
    ke_rest = rows[-1].get("kinetic_inside_j", rows[-1]["kinetic_j"])
    ok_energy = rise <= ENERGY_SLACK * (e0 - e_floor) and ke_rest < REST_KE_J
    return {"solver": solver, "steps": rows[-1]["step"], "dt": dt, "seconds": rows[-1]["step"] * dt, "wall_s": wall,
            "ms_per_step": 1000.0 * wall / max(rows[-1]["step"], 1), "rss_first_mb": float(rss[base]),
            "rss_last_mb": float(rss[end]), "rss_growth_mb": growth, "peak_rss_mb":
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, "energy_start_j": e0,
            "energy_floor_j": e_floor, "energy_max_rise_j": rise, "kinetic_end_j": rows[-1]["kinetic_j"],
            "kinetic_inside_end_j": ke_rest, "escaped_end": rows[-1].get("escaped"),
            "max_penetration_end_m": rows[-1]["max_penetration_m"], "memory_bounded": ok_memory,
            "energy_bounded": ok_energy, "error": error, "segments": int(len(np.unique(segments))),
            "samples": rows}


def kept_results(path: Path, solvers: list[str]) -> list[dict]:
    """``--keep``: the rows of an earlier soak.json for solvers not run now, each marked with the date
    and commit of the run that measured it (a long soak can then be run one solver at a time)."""
    if not path.exists():
        return []
    import json

    old = json.loads(path.read_text())
    meta = old.get("meta", {})
    stamp = f"{meta.get('date', '?')}, {str(meta.get('git', '?'))[:7]}"
    return [{**r, "run": r.get("run") or stamp} for r in old.get("results", []) if r["solver"] not in solvers]


def write_report(start, args, argv, steps: int, sample: int, results: list[dict], meta: dict | None = None) -> None:
    """soak.md and soak.json for the solvers done so far (``meta``: an earlier run's, when re-judged)."""
    if meta is None:
        meta = run_meta(start, "benchmarks/soak.py", argv if argv is not None else sys.argv[1:], args.quick,
                        steps=steps, sample=sample, jobs=args.jobs)
    table = [[r["solver"] + (f" (run {r['run']})" if r.get("run") else ""), str(r["steps"]),
              f"{r['seconds']:.0f}", f"{r['ms_per_step']:.2f}",
              f"{r['rss_first_mb']:.0f} -> {r['rss_last_mb']:.0f}", f"{r['rss_growth_mb']:+.1f}",
              f"{r['energy_start_j']:.0f}", f"{r['energy_max_rise_j']:+.2f}", f"{r['kinetic_end_j']:.3g}",
              "-" if r.get("kinetic_inside_end_j") is None or r.get("escaped_end") is None
              else f"{r['kinetic_inside_end_j']:.3g} ({r['escaped_end']} out)",
              f"{1000 * r['max_penetration_end_m']:.1f}",
              "yes" if r["memory_bounded"] else "**no**", "yes" if r["energy_bounded"] else "**no**",
              str(r.get("segments", 1)), r["error"][:80] or "-"] for r in results]
    lines = ["# Soak: pile1000 for many steps under each solver (issue 17)", "",
             *setup_lines(meta, "1000 steps"), "",
             f"1000 spheres (r 0.1 m) dropped into a 2 x 2 m box, dt 1/60 s, {steps} steps per solver; a sample "
             f"every {sample} steps. Memory: resident set after the warm-up ({100 * WARMUP_FRACTION:g} % of the "
             f"steps from a process's start) -> at the end (bounded: grows < {MEMORY_SLACK_MB:g} MB). Energy: "
             f"total (kinetic + potential) at the start and its largest rise "
             f"above it (bounded: rise <= {100 * ENERGY_SLACK:g} % of the start's potential energy above the "
             f"resting floor, and the kinetic energy of the spheres in the box at the end < {REST_KE_J:g} J;"
             f" '(n out)': spheres that rolled over a wall, not judged). 'processes': how many processes ran"
             f" the soak one after the other through `--checkpoint` (memory growth is the largest within one).", "",
             md_table(["solver", "steps", "simulated s", "ms/step", "RSS MB", "RSS growth MB", "E start J",
                       "max E rise J", "KE end J", "KE in the box end J",
                       "depth end mm", "memory bounded", "energy bounded", "processes",
                       "error"],
                      table)]
    if meta.get("rejudged"):
        lines.insert(lines.index("") + len(setup_lines(meta, "")) + 1,
                     f"- verdicts re-judged from the samples at {meta['rejudged']} (`soak.py --rejudge`)")
    write_markdown(start.out / "soak.md", lines)
    write_json(start.out / "soak.json", {"meta": meta, "results": results})
    log(f"wrote {start.out / 'soak.md'} ({len(results)} solvers)")


def rejudge(start, args, argv) -> int:
    """``--rejudge``: every result of soak.json judged again from its samples by :func:`summary`."""
    import json

    path = start.out / "soak.json"
    old = json.loads(path.read_text())
    meta = {**old["meta"], "rejudged": time.strftime("%Y-%m-%d %H:%M:%S")}
    results = []
    for r in old["results"]:
        unfinished = r["error"].startswith("unfinished")
        planned = int(r["error"].split(" of ")[1].split()[0]) if unfinished else r["steps"]
        new = summary(r["solver"], r["samples"], r["dt"], r["energy_start_j"], r["energy_floor_j"], r["wall_s"],
                      "" if unfinished else r["error"], planned)
        results.append({**new, "peak_rss_mb": r["peak_rss_mb"], **({"run": r["run"]} if r.get("run") else {})})
    write_report(start, args, argv, int(meta.get("steps", results[0]["steps"])), int(meta.get("sample", 1)),
                 results, meta)
    return 0


def main(argv=None) -> int:
    ap = benchmark_arguments(__doc__, "1000 steps per solver (a smoke run)", "Numba threads (default: all)")
    ap.add_argument("--steps", type=int, default=100_000, help="steps per solver (default 10^5)")
    ap.add_argument("--sample", type=int, default=None, help="steps between samples (default steps / 100)")
    ap.add_argument("--solvers", default=",".join(s["name"] for s in tb.solvers()), help="comma-separated")
    ap.add_argument("--jobs", type=int, default=1, help="solvers run at once, each in its own process")
    ap.add_argument("--checkpoint", type=Path, default=None,
                    help="folder: save each solver's run there every tenth sample and resume from it")
    ap.add_argument("--keep", action="store_true",
                    help="keep the other solvers' rows of the existing soak.json (each marked with its run)")
    ap.add_argument("--rejudge", action="store_true",
                    help="run nothing: judge the samples of the existing soak.json again (after a change of the "
                         "rules) and rewrite soak.md / soak.json with the runs' own metadata")
    args = ap.parse_args(argv)
    start = start_run(args)
    if args.rejudge:
        return rejudge(start, args, argv)
    steps = 1000 if args.quick else int(args.steps)
    sample = args.sample or max(1, steps // 100)
    solvers = args.solvers.split(",")
    kept = kept_results(start.out / "soak.json", solvers) if args.keep else []
    log(f"soak: {', '.join(solvers)}, {steps} steps of pile1000 each, {args.jobs} at once")
    if args.jobs > 1:
        # spawn, not fork: the parent has started Numba's OpenMP threads, which a forked child cannot use
        with ProcessPoolExecutor(max_workers=args.jobs, mp_context=multiprocessing.get_context("spawn"),
                                 initializer=set_numba_threads, initargs=(args.threads,)) as pool:
            results = list(pool.map(soak, solvers, [steps] * len(solvers), [sample] * len(solvers),
                                    [None] * len(solvers), [args.checkpoint] * len(solvers)))
        write_report(start, args, argv, steps, sample, kept + results)
    else:
        results = []
        for solver in solvers:      # the report is rewritten as it goes: a run cut short keeps its samples
            def progress(partial, done=tuple(results)):
                write_report(start, args, argv, steps, sample, kept + list(done) + [partial])

            results.append(soak(solver, steps, sample, progress, args.checkpoint))
            write_report(start, args, argv, steps, sample, kept + results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
