"""The mass-ratio threshold of Catto 001 section 9.2, found by bisection over many runs with tb.sweep.

    python examples/sweeps/mass_ratio_bisect.py [--rounds 5] [--per-round 6] [--workers 2]

The scene ``mass_ratio`` stacks a light box (``ratio`` x 110 kg) under a 110 kg box; below some ratio
the solver cannot hold the heavy box up within its iterations and the stack fails. Per solver the
driver keeps a bracket [fails, stands] in log(ratio), starting from [1e-3, 1] (both ends run first),
and every round runs ``per-round`` ratios spaced evenly in log inside it as one sweep (one Dask
cluster serves every round), then shrinks the bracket to the pair of neighbours where the outcome
flips. Each round divides the bracket's log-width by per-round + 1. The threshold estimate is the
bracket's geometric mean. A solver that stands (or fails) at both ends has no threshold in range,
and one whose outcome flips more than once over the ratios tried is reported as not monotonic, with
its transition band: from the lowest ratio that stood to the highest that failed (the bisection then
found one flip inside a band where the outcome is erratic).

Writes to examples/sweeps/results/mass_ratio/: threshold.md, summary.csv/summary.md (every run)
and standing_vs_ratio.png (log axis); the runs' Parquet table stays uncommitted.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import tomllib
from pathlib import Path

import tumble as tb
from tumble.sweep import summary, table

HERE = Path(__file__).resolve().parent
#: The bracket every solver starts from: ratios (light / heavy).
START = (1e-3, 1.0)


def log_points(lo: float, hi: float, k: int) -> list[float]:
    a, b = math.log(lo), math.log(hi)
    return [math.exp(a + (b - a) * (i + 1) / (k + 1)) for i in range(k)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--per-round", type=int, default=6)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "mass_ratio"))
    a = ap.parse_args()
    base = tomllib.loads((HERE / "mass_ratio.toml").read_text())
    base.pop("grid", None)
    solvers = base["sweep"]["solvers"]
    from distributed import Client, LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster)
    rows: list[dict] = []
    outcome: dict[str, dict[float, bool]] = {s: {} for s in solvers}
    bracket = {s: START for s in solvers}
    live = list(solvers)
    for rnd in range(a.rounds + 1):
        for s in list(live):
            ratios = list(START) if rnd == 0 else log_points(*bracket[s], a.per_round)
            spec = {**base, "sweep": {**base["sweep"], "solvers": [s], "points": [{"ratio": r} for r in ratios]}}
            res = tb.sweep(spec, client=client, progress=False)
            rows += res.rows
            for r in res.rows:
                if r["error"] is None:
                    outcome[s][r["param.ratio"]] = r["metric.standing"] == 1.0
            if rnd == 0 and outcome[s].get(START[0]) == outcome[s].get(START[1]):
                live.remove(s)                # no flip between the ends: nothing to bisect
                continue
            xs = sorted(x for x in outcome[s] if bracket[s][0] <= x <= bracket[s][1])
            for lo, hi in zip(xs, xs[1:]):
                if not outcome[s][lo] and outcome[s][hi]:
                    bracket[s] = (lo, hi)
                    break
            print(f"round {rnd} {s}: bracket {bracket[s][0]:.5g} .. {bracket[s][1]:.5g}", file=sys.stderr)
    client.close()
    cluster.close()
    wall = time.perf_counter() - t0
    out = Path(a.out)
    table.write(out, rows)
    summary.write_tables(rows, ["ratio"], out)
    lines = ["# Catto 001 section 9.2: mass-ratio threshold by bisection (tb.sweep)", "",
             f"`python examples/sweeps/mass_ratio_bisect.py --rounds {a.rounds} --per-round {a.per_round}`: "
             f"{len(rows)} runs of {base['sweep']['seconds']:g} s (scene `mass_ratio`, light box under the "
             f"110 kg box, warm start on, the scene's dt and iterations), {wall:.0f} s wall on this machine.", "",
             "| solver | fails at | stands at | threshold (geometric mean) | runs | monotonic | "
             "transition band (lowest standing .. highest failing) |",
             "|---|---|---|---|---|---|---|"]
    for s in solvers:
        xs = sorted(outcome[s])
        flips = sum(outcome[s][x] != outcome[s][y] for x, y in zip(xs, xs[1:]))
        n = sum(r["solver"] == s for r in rows)
        if outcome[s].get(START[0]) == outcome[s].get(START[1]):
            verdict = "stands" if outcome[s].get(START[0]) else "fails"
            none = f"none in [{START[0]:g}, {START[1]:g}]: {verdict} at both ends"
            lines.append(f"| {s} | - | - | {none} | {n} | - | - |")
            continue
        lo, hi = bracket[s]
        mono = "yes" if flips == 1 else f"no ({flips} flips)"
        stand = min(x for x in xs if outcome[s][x])
        fail = max(x for x in xs if not outcome[s][x])
        band = f"{stand:.4g} .. {fail:.4g}" if fail > stand else "-"
        lines.append(f"| {s} | {lo:.4g} | {hi:.4g} | {math.sqrt(lo * hi):.4g} | {n} | {mono} | {band} |")
    (out / "threshold.md").write_text("\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=90)
    for i, s in enumerate(solvers):
        xs = sorted(outcome[s])
        ax.plot(xs, [1.0 * outcome[s][x] + 0.03 * i for x in xs], "o", label=s)
    ax.set_xscale("log")
    ax.set_xlabel("ratio (light / heavy mass)")
    ax.set_ylabel("standing after the run (1 = yes)")
    ax.set_title("mass_ratio: every run of the bisection", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "standing_vs_ratio.png")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
