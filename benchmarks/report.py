"""What the benchmark scripts (``run.py``, ``stacking.py``, ``joints.py``, ``impulse.py``, ``render.py``)
share to write their reports: the machine tag and result folder, the bookkeeping of a run (start,
CPU used by other processes, git state, the ``meta`` block and its markdown lines), table cells and
markdown tables, JSON, matplotlib figures, the experiment loop and the warm-up.

Plain functions; nothing here steps a world except :func:`warm_up_solvers`, and nothing imports
more of tumble than its public package.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
#: Average number of cores other processes may keep busy during a run before the report flags its
#: timings as not from an idle machine (measured from /proc/stat minus this process's own CPU time).
BUSY_CORES = 0.2


def log(msg: str) -> None:
    """Progress message on stderr (stdout is left to the path of the report)."""
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------------------------
# machine and result folder

def cpu_model() -> str:
    """Short CPU model, e.g. ``amd-epyc-7b13`` or ``intel-xeon-8375c``."""
    name = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                name = line.split(":", 1)[1]
                break
    except OSError:
        pass
    s = name.lower()
    s = re.sub(r"\(r\)|\(tm\)|\bcpu\b|\bprocessor\b|@.*$|\d+-core|with .*$", " ", s)
    toks = [t for t in re.split(r"[^a-z0-9]+", s) if t and t not in {"platinum", "gold", "silver", "core"}]
    return "-".join(toks[:3]) or "unknown"


def core_count() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine_tag() -> str:
    """``<ci|local>-<cores>core-<cpu model>``, or ``TUMBLE_MACHINE_TAG`` when set."""
    tag = os.environ.get("TUMBLE_MACHINE_TAG")
    if tag:
        return tag
    return f"{'ci' if os.environ.get('CI') else 'local'}-{core_count()}core-{cpu_model()}"


def results_dir(tag: str, quick: bool = False, out: str | Path | None = None) -> Path:
    """``out`` if given, else ``benchmarks/results/<tag>`` (``<tag>-quick.tmp``, which git ignores, in quick mode)."""
    if out:
        return Path(out)
    return ROOT / "benchmarks" / "results" / (f"{tag}-quick.tmp" if quick else tag)


def git_state() -> str:
    """Short commit of the checkout, marked when it has uncommitted changes; ``unknown`` without git."""
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return f"{rev}{' (with uncommitted changes)' if dirty else ''}" if rev else "unknown"
    except Exception:
        return "unknown"


# ------------------------------------------------------------------------------------------------
# CPU used by other processes

def machine_busy_seconds() -> float:
    """CPU seconds all processes have used since boot (/proc/stat: all but idle and iowait); nan elsewhere."""
    try:
        f = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        busy = sum(f[:8]) - f[3] - f[4]
        return busy / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return math.nan


def own_cpu_seconds() -> float:
    """CPU seconds this process and its children have used."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def cpu_mark() -> tuple[float, float]:
    """``(machine_busy_seconds(), own_cpu_seconds())`` now: the start of an :func:`other_cores` interval."""
    return machine_busy_seconds(), own_cpu_seconds()


def other_cpu_seconds(start: tuple[float, float]) -> float:
    """CPU seconds other processes used since ``start = cpu_mark()``."""
    return max(0.0, (machine_busy_seconds() - start[0]) - (own_cpu_seconds() - start[1]))


def other_cores(start: tuple[float, float], wall_s: float) -> float:
    """Cores other processes kept busy on average over the ``wall_s`` seconds since ``start = cpu_mark()``."""
    other = other_cpu_seconds(start)
    return other / wall_s if math.isfinite(other) and wall_s > 0 else math.nan


def set_numba_threads(n: int | None) -> int:
    """Use ``n`` Numba threads (clamped to 1..NUMBA_NUM_THREADS; None: leave as is); returns the count in use."""
    import numba

    if n is not None:
        numba.set_num_threads(max(1, min(int(n), numba.config.NUMBA_NUM_THREADS)))
    return numba.get_num_threads()


# ------------------------------------------------------------------------------------------------
# a run: arguments, start, meta

def benchmark_arguments(description: str, quick_help: str, threads_help: str,
                        experiments: list[str] | None = None) -> argparse.ArgumentParser:
    """The options every report script has: ``--quick``, ``--experiments`` (when the script has
    ``experiments``), ``--out``, ``--tag`` and ``--threads``; the script adds its own."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true", help=quick_help)
    if experiments is not None:
        ap.add_argument("--experiments", default=None,
                        help=f"comma-separated: {','.join(experiments)} (or 1-{len(experiments)})")
    ap.add_argument("--out", default=None, help="output folder (default benchmarks/results/<machine tag>)")
    ap.add_argument("--tag", default=None, help="machine tag (default as benchmarks/run.py)")
    ap.add_argument("--threads", type=int, default=None, help=threads_help)
    return ap


class RunStart(NamedTuple):
    """What :func:`start_run` records (a tuple, so it also unpacks as one)."""

    tag: str
    out: Path
    t_start: float                       # time.perf_counter() at the start
    load_start: tuple                    # os.getloadavg() at the start
    cpu_start: tuple                     # cpu_mark() at the start

    def elapsed(self) -> float:
        """Wall seconds since the start."""
        return time.perf_counter() - self.t_start


def start_run(args) -> RunStart:
    """What every benchmark script does first: the machine tag, the output folder (a git-ignored
    ``<tag>-quick.tmp`` for ``--quick``), the start time, load average and CPU counters, a warning
    when the machine is busy, and the Numba thread count of ``--threads``."""
    tag = args.tag or machine_tag()
    out = results_dir(tag, args.quick, args.out)
    t_start = time.perf_counter()
    load_start = os.getloadavg()
    cpu_start = cpu_mark()
    if load_start[0] > 0.5:
        log(f"warning: load average {load_start[0]:.2f} before the run: other processes compete for the "
            f"{core_count()} cores, timings will be high")
    if args.threads is not None:
        set_numba_threads(args.threads)
    return RunStart(tag, out, t_start, load_start, cpu_start)


def run_meta(start: RunStart, script: str, argv, quick: bool, *, numba_max_threads: bool = False,
             figures: list | None = None, **fields) -> dict:
    """The ``meta`` block of a report, in this key order: tag, date, machine, cores, cpu, loadavg,
    python, numpy, numba, numba_threads, [numba_max_threads], git, command, quick, ``fields``, wall_s,
    [figures], other_cores (cores other processes kept busy on average) and busy (above BUSY_CORES).
    ``script`` is the path of the script as it is run (``benchmarks/stacking.py``), ``argv`` its
    arguments (None: ``sys.argv[1:]``)."""
    import numba

    meta = {"tag": start.tag, "date": time.strftime("%Y-%m-%d %H:%M:%S"), "machine": platform.machine(),
            "cores": core_count(), "cpu": cpu_model(), "loadavg": " ".join(f"{x:.2f}" for x in start.load_start),
            "python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
            "numba_threads": numba.get_num_threads()}
    if numba_max_threads:
        meta["numba_max_threads"] = numba.config.NUMBA_NUM_THREADS
    meta.update(git=git_state(), command=f"python {script} " + " ".join(argv if argv is not None else sys.argv[1:]),
                quick=bool(quick), **fields)
    meta["wall_s"] = start.elapsed()
    if figures is not None:
        meta["figures"] = figures
    meta["other_cores"] = other_cores(start.cpu_start, meta["wall_s"])
    meta["busy"] = bool(meta["other_cores"] > BUSY_CORES)
    return meta


def setup_lines(meta: dict, quick_note: str, busy_note: str = "timings are inflated",
                numba_max_threads: bool = False) -> list[str]:
    """The report's bullet lines on the run from :func:`run_meta`: date, machine and load, CPU used by
    other processes (with ``busy_note`` when busy), versions and git, the command (with ``quick_note``
    in quick mode)."""
    threads = (f": {meta['numba_threads']} threads (of {meta['numba_max_threads']})" if numba_max_threads
               else f" ({meta.get('numba_threads', '?')} threads)")
    return [f"- date: {meta['date']}",
            f"- machine: {meta['machine']}, {meta['cores']} cores, CPU `{meta['cpu']}`; load average (1, 5, 15 min) "
            f"at start {meta['loadavg']}",
            f"- CPU used by other processes during the run: {fmt(meta.get('other_cores'))} cores on average"
            + (f" -- **the machine was not idle: {busy_note}**" if meta.get("busy") else ""),
            f"- python {meta['python']}, numpy {meta['numpy']}, numba {meta['numba']}{threads}; "
            f"tumble at git {meta['git']}",
            f"- command: `{meta['command']}`"
            + (f" (**quick mode**: {quick_note}; numbers are a smoke test, not results)" if meta.get("quick") else "")]


def warmup_text(warm: dict) -> str:
    """``{solver: seconds or error}`` of :func:`warm_up_solvers` as one line of the report."""
    return ", ".join(f"{k} {v:.1f} s" if isinstance(v, float) else f"{k} {v}" for k, v in warm.items())


# ------------------------------------------------------------------------------------------------
# warm-up

def warm_up_solvers(solvers) -> dict:
    """Compile (or load from the Numba cache) every solver's kernels once on a small scene
    (``stack3_nocache``, 2 steps); ``{solver: seconds}``, or the error message of a solver that failed."""
    from tumble import scenes

    out = {}
    for s in solvers:
        t = time.perf_counter()
        try:
            w = scenes.build("stack3_nocache", solver=s)
            for _ in range(2):
                w.step(1.0 / 60.0)
            out[s] = time.perf_counter() - t
        except Exception as e:
            out[s] = f"{type(e).__name__}: {e}"
        log(f"warm-up {s}: " + (f"{out[s]:.1f} s" if isinstance(out[s], float) else out[s]))
    return out


def warmed_up_world(build, dt: float, steps: int):
    """``build()`` after stepping a throw-away ``build()`` ``steps`` times by ``dt`` (so the kernels it
    needs are compiled or loaded before anything is timed)."""
    if steps > 0:
        w = build()
        for _ in range(steps):
            w.step(dt)
        del w
    return build()


# ------------------------------------------------------------------------------------------------
# numbers and tables

def mean_p95(ms) -> tuple[float, float]:
    """Mean and 95th percentile of per-step times (nan, nan for none)."""
    a = np.asarray(ms, dtype=float)
    if a.size == 0:
        return math.nan, math.nan
    return float(a.mean()), float(np.percentile(a, 95))


def rounded_series(a, digits: int = 4, scale: float = 1.0) -> list:
    """A per-step series for the JSON: each value times ``scale`` to ``digits`` significant digits, nan -> None."""
    return [None if not math.isfinite(x) else float(f"{x * scale:.{digits}g}") for x in np.asarray(a, dtype=float)]


def fmt(v, digits: int = 3, scale: float = 1.0) -> str:
    """A table cell: '-' for None/nan, yes/no for booleans, ``digits`` significant digits otherwise."""
    if v is None:
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)) and scale == 1.0:
        return str(int(v))
    if isinstance(v, (float, np.floating, int, np.integer)):
        x = float(v) * scale
        if not math.isfinite(x):
            return "-" if math.isnan(x) else str(x)
        return f"{x:.{digits}g}"
    if isinstance(v, (list, tuple, np.ndarray)):
        return "[" + ", ".join(fmt(u, digits, scale) for u in v) + "]"
    if isinstance(v, dict):
        return ", ".join(f"{k}: {fmt(u, digits, scale)}" for k, u in v.items())
    return str(v).replace("|", "\\|")


def pass_fail(ok: bool | None) -> str:
    """PASS / FAIL, or n/a for None."""
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def yes_no(ok) -> str:
    """yes / no, or n/a for None."""
    return "n/a" if ok is None else ("yes" if ok else "no")


def md_table(headers, rows) -> str:
    """A GitHub markdown table; cells go through :func:`fmt` unless they are strings already."""
    out = ["| " + " | ".join(str(h) for h in headers) + " |", "|" + "---|" * len(headers)]
    for r in rows:
        cells = [c if isinstance(c, str) else fmt(c) for c in r]
        cells += [""] * (len(headers) - len(cells))
        out.append("| " + " | ".join(c.replace("\n", " ") for c in cells) + " |")
    return "\n".join(out)


#: Columns of the engines-side-by-side table of ``bench.md`` (one row per engine and scene).
ENGINE_COLUMNS = ["engine", "ms/step", "p95 ms", "vs pybullet", "max_pen [mm]", "max_drift [m]", "standing",
                  "energy [J]", "energy gain [J]"]


def engine_rows(rows: list[dict]) -> list[list[str]]:
    """The cells of :data:`ENGINE_COLUMNS` for result dicts (``engine``, ``ms_mean``, ``ms_p95`` and the
    ``SceneMetrics`` keys, or ``error``); the ratio is to the first PyBullet row that ran."""
    ref = next((r["ms_mean"] for r in rows if r["engine"].startswith("pybullet") and "error" not in r), None)
    out = []
    for r in rows:
        if "error" in r:
            out.append([r["engine"], r["error"]] + [""] * (len(ENGINE_COLUMNS) - 2))
            continue
        ratio = f"{r['ms_mean'] / ref:.2f}x" if ref else "-"
        st = "-" if r["standing"] is None else ("yes" if r["standing"] else "no")
        out.append([r["engine"], f"{r['ms_mean']:.2f}", f"{r['ms_p95']:.2f}", ratio,
                    f"{1000 * r['max_penetration']:.1f}", f"{r['max_drift']:.3f}", st, f"{r['energy']:.4g}",
                    f"{r['energy_max_gain']:.3g}"])
    return out


def engine_md_table(rows: list[dict]) -> str:
    """The engines side by side as in ``bench.md``: :data:`ENGINE_COLUMNS`, one row per result dict."""
    return md_table(ENGINE_COLUMNS, engine_rows(rows))


# ------------------------------------------------------------------------------------------------
# files

def to_jsonable(o):
    """Numpy arrays/scalars and nested containers as JSON values (nan -> null)."""
    if isinstance(o, dict):
        return {str(k): to_jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [to_jsonable(v) for v in o]
    if isinstance(o, np.ndarray):
        return to_jsonable(o.tolist())
    if isinstance(o, (np.bool_, bool)):
        return bool(o)
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (float, np.floating)):
        x = float(o)
        return x if math.isfinite(x) else None
    return o


def write_json(path: Path, payload) -> None:
    """``payload`` through :func:`to_jsonable`, indented by 1 (the folder is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_jsonable(payload), indent=1))


def write_markdown(path: Path, lines: list[str]) -> None:
    """The lines joined by newlines (no newline added at the end; the folder is created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines))


# ------------------------------------------------------------------------------------------------
# figures

def pyplot():
    """``matplotlib.pyplot`` on the headless Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def legend(ax, **kw) -> None:
    """``ax.legend(**kw)`` when something on ``ax`` has a label (no empty-legend warning otherwise)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kw)


def figure_path(out: Path, prefix: str, name: str, figures: list) -> Path:
    """``out/<prefix>_<name>.png``, its file name appended to ``figures`` (the report's list of PNGs)."""
    p = out / f"{prefix}_{name}.png"
    figures.append(p.name)
    return p


def save_figure(fig, path: Path, dpi: int = 110) -> Path:
    """Tight layout, write ``fig`` to ``path`` (the folder is created) and close it; returns ``path``."""
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path


def figure_lines(fig, path: Path, alt: str, dpi: int = 110) -> list[str]:
    """:func:`save_figure`, then the report's lines that show it: ``![alt](<file name>)`` and a blank line."""
    return [f"![{alt}]({save_figure(fig, path, dpi).name})", ""]


# ------------------------------------------------------------------------------------------------
# experiments

def parse_experiments(text: str | None, experiments) -> list[str]:
    """``--experiments``: comma-separated names or 1-based numbers of ``experiments``, in their order;
    all of them when empty."""
    experiments = list(experiments)
    if not text:
        return experiments
    out = []
    for tok in (t.strip() for t in text.split(",")):
        if not tok:
            continue
        if tok.isdigit() and 1 <= int(tok) <= len(experiments):
            tok = experiments[int(tok) - 1]
        if tok not in experiments:
            raise SystemExit(f"unknown experiment {tok!r}; choose from {', '.join(experiments)} "
                             f"or 1-{len(experiments)}")
        if tok not in out:
            out.append(tok)
    return [e for e in experiments if e in out]


def run_experiments(exps, experiments, runners, ctx) -> tuple[list, list, dict]:
    """Run each experiment ``runners[e](ctx) -> (markdown lines, data, findings)``; one that raises is
    reported (traceback in its section) and the next one runs. Returns (sections, findings, data)."""
    sections, findings, data = [], [], {}
    for e in exps:
        log(f"\n== experiment {list(experiments).index(e) + 1}: {e}")
        t = time.perf_counter()
        try:
            md, d, f = runners[e](ctx)
        except Exception as ex:                       # report and go on with the next experiment
            tb = traceback.format_exc()
            log(tb)
            md, d, f = [f"## {e}", "", f"_failed: {type(ex).__name__}: {ex}_", "", "```", tb.strip(), "```"], \
                {"error": str(ex)}, []
        sections.append(md)
        findings += f
        data[e] = d
        log(f"   {e}: {time.perf_counter() - t:.0f} s")
    return sections, findings, data
