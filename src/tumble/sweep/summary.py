"""Summary of a results table: per-group means (CSV + markdown) and PNG plots of each metric against
each varied parameter, one line per solver (and per dt when the sweep varies dt).

A group is one (solver, dt, parameter point); its value of a metric is the mean over its repeats
that finished without error (a bool metric such as ``standing`` becomes the fraction of runs, e.g.
the probability of standing). A jittered parameter is plotted as a scatter of the values the runs
actually used.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path


def _num(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _mean(xs) -> float:
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else math.nan


def _cols(rows, prefix):
    return [c for c in dict.fromkeys(k for r in rows for k in r) if c.startswith(prefix)]


def numeric_metrics(rows) -> list[str]:
    return [c for c in _cols(rows, "metric.") if any(_num(r.get(c)) is not None for r in rows)
            and not any(isinstance(r.get(c), str) for r in rows)]


def groups(rows: list[dict], varied: list[str]) -> list[dict]:
    """One dict per (solver, dt, varied parameter values): n, errors, mean of each numeric metric."""
    metrics = numeric_metrics(rows)
    keyed = defaultdict(list)
    for r in rows:
        key = (r["solver"], r["dt"], *(r.get(f"param.{p}") for p in varied))
        keyed[key].append(r)
    out = []
    for key in sorted(keyed, key=lambda k: tuple(str(x) if not isinstance(x, (int, float)) else x for x in k)):
        rs = keyed[key]
        ok = [r for r in rs if r.get("error") is None]
        g = {"solver": key[0], "dt": key[1], **{p: v for p, v in zip(varied, key[2:])},
             "runs": len(rs), "errors": len(rs) - len(ok),
             "wall_s": _mean(_num(r.get("wall_s")) for r in ok)}
        for m in metrics:
            g[m[len("metric."):]] = _mean(_num(r.get(m)) for r in ok)
        out.append(g)
    return out


def _fmt(v) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def write_tables(rows: list[dict], varied: list[str], folder) -> list[Path]:
    """summary.csv and summary.md in ``folder``."""
    folder = Path(folder)
    gs = groups(rows, varied)
    if not gs:
        return []
    cols = list(dict.fromkeys(k for g in gs for k in g))
    csv_path, md_path = folder / "summary.csv", folder / "summary.md"
    with open(csv_path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        for g in gs:
            w.writerow({k: _fmt(g.get(k)) for k in cols})
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(g.get(k)) for k in cols) + " |" for g in gs]
    errs = sorted({r["error"] for r in rows if r.get("error")})
    if errs:
        lines += ["", "Errors:", ""] + [f"- {e[:300]}" for e in errs[:20]]
    md_path.write_text("\n".join(lines) + "\n")
    return [csv_path, md_path]


def plot(rows: list[dict], varied: list[str], jittered: list[str], folder, title: str = "") -> list[Path]:
    """``<metric>_vs_<parameter>.png`` in ``folder`` for every numeric metric and varied parameter."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = Path(folder)
    metrics = numeric_metrics(rows)
    dts = sorted({r["dt"] for r in rows if _num(r["dt"]) is not None})
    axes = [p for p in varied if all(_num(r.get(f"param.{p}")) is not None for r in rows)]
    if len(dts) > 1:
        axes.append("dt")
    written = []
    ok = [r for r in rows if r.get("error") is None]
    lines_of = sorted({(r["solver"], r["dt"]) if len(dts) > 1 else (r["solver"], None) for r in ok},
                      key=lambda t: (t[0], t[1] or 0))
    for m in metrics:
        name = m[len("metric."):]
        for p in axes + [j for j in jittered if j not in axes]:
            fig, ax = plt.subplots(figsize=(6, 4), dpi=90)
            for solver, dt in lines_of:
                sel = [r for r in ok if r["solver"] == solver and (dt is None or r["dt"] == dt or p == "dt")]
                label = solver if dt is None or p == "dt" else f"{solver} dt={dt:g}"
                if p == "dt" and dt is not None and dt != dts[0]:
                    continue                      # vs dt: one line per solver
                if p in jittered:
                    xs = [_num(r.get(f"param.{p}")) + r.get(f"jitter.{p}", 0.0) for r in sel]
                    ax.plot(xs, [_num(r.get(m)) for r in sel], "o", alpha=0.6, label=label)
                    continue
                by = defaultdict(list)
                for r in sel:
                    by[r["dt"] if p == "dt" else _num(r.get(f"param.{p}"))].append(_num(r.get(m)))
                xs = sorted(by)
                ax.plot(xs, [_mean(by[x]) for x in xs], "o-", label=label)
            ax.set_xlabel(p + (" (jittered, as run)" if p in jittered else ""))
            if p in jittered:
                ax.set_ylabel(name + " (per run)")
            else:
                ax.set_ylabel(name + (" (fraction of runs)" if name == "standing" else " (mean over runs)"))
            ax.set_title(f"{title}: {name} vs {p}" if title else f"{name} vs {p}", fontsize=10)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=8)
            fig.tight_layout()
            path = folder / f"{name}_vs_{p}.png"
            fig.savefig(path)
            plt.close(fig)
            written.append(path)
        if jittered:
            # an ensemble: the distribution of the outcome over the jittered runs, per solver
            fig, ax = plt.subplots(figsize=(6, 4), dpi=90)
            solvers = sorted({r["solver"] for r in ok})
            data = [[v for r in ok if r["solver"] == sv and (v := _num(r.get(m))) is not None] for sv in solvers]
            if any(data):
                ax.hist(data, bins=min(20, max(5, len(ok) // 4)), label=solvers, alpha=0.8)
                ax.set_xlabel(name)
                ax.set_ylabel("runs")
                ax.set_title(f"{title}: distribution of {name} over jittered runs" if title else name, fontsize=10)
                ax.legend(fontsize=8)
                fig.tight_layout()
                path = folder / f"{name}_distribution.png"
                fig.savefig(path)
                written.append(path)
            plt.close(fig)
    return written
