"""Plots of a recording's per-step counters (matplotlib, Agg backend: no display needed).

``plot(recording, out_dir)`` writes one PNG per quantity, each against simulated time [s]:

* ``energy.png``: kinetic and potential energy (-sum m g.x, relative to the first step) and their
  sum [J]: a closed frictionless elastic scene keeps the sum flat, a stack at rest keeps all at 0;
* ``penetration.png``: the deepest contact of each step [mm];
* ``merit.png``: the solver's NCP merit theta(lambda) after the step (000 §3.3), log scale;
* ``contacts.png``: contact points and solver iterations per step;
* ``stages.png``: ms per stage stacked (the step's ``total`` drawn as a line on top, so time outside
  the named stages shows as the gap), the per-stage profile of DESIGN "The step"; the y axis is
  clipped at 1.5x the 99th percentile of the total so a first step that compiled stays off scale;
* ``summary.png``: the five panels on one page;
* recordings with elastic bodies also get ``elastic_energy.png`` (the elastic bodies' energy split:
  strain, kinetic, potential relative to the first step, contact springs, dissipated so far, and their
  total, which only prescribed motion may change) and ``elastic_steps.png`` (the elastic integrator's
  mean step size dt / steps per world step [ms], log scale, and its steps per world step).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tumble.recording import Recording

#: plot files written by :func:`plot`, in order
FILES = ("energy.png", "penetration.png", "merit.png", "contacts.png", "stages.png", "summary.png")
#: written besides for recordings with elastic bodies
ELASTIC_FILES = ("elastic_energy.png", "elastic_steps.png")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _title(rec: Recording) -> str:
    return f"{rec.scene or 'world'} ({rec.solver}, dt = {rec.dt * 1000:.3g} ms, {rec.body_count} bodies)"


def _energy(ax, rec):
    t = rec.step_time
    # potential energy relative to the first step: its absolute value (tens of MJ for a tall stack
    # far from the origin) would flatten the kinetic curve to a line at zero
    ke, pe = rec.step_kinetic_energy, rec.step_potential_energy
    pe = pe - pe[0] if len(pe) else pe
    ax.plot(t, ke, label="kinetic")
    ax.plot(t, pe, label="potential − first step")
    ax.plot(t, ke + pe, label="total − first step's PE", color="k", lw=1.2)
    ax.set_ylabel("energy [J]")
    ax.legend(loc="best", fontsize=8)


def _penetration(ax, rec):
    ax.plot(rec.step_time, 1000.0 * rec.step_max_penetration, color="C3")
    ax.set_ylabel("max penetration [mm]")


def _merit(ax, rec):
    m = rec.step_merit
    pos = m > 0
    if np.any(pos):
        ax.semilogy(rec.step_time[pos], m[pos], color="C4")
    else:
        ax.text(0.5, 0.5, "merit is 0 in every step (or not computed)", ha="center", va="center",
                transform=ax.transAxes, fontsize=9)
    ax.set_ylabel("merit θ(λ)")


def _contacts(ax, rec):
    ax.plot(rec.step_time, rec.step_contacts, color="C0", label="contact points")
    ax.set_ylabel("contact points")
    ax2 = ax.twinx()
    ax2.plot(rec.step_time, rec.step_iterations, color="C1", lw=0.8, label="iterations")
    ax2.set_ylabel("iterations", color="C1")


def _stages(ax, rec):
    names = list(rec.meta["stage_names"])
    ms = rec.step_ms
    t = rec.step_time
    parts = [n for n in names if n != "total"]
    if parts:
        # largest stages at the bottom, so the thin ones stay readable on top
        order = sorted(parts, key=lambda n: -float(ms[:, names.index(n)].mean()))
        ax.stackplot(t, *[ms[:, names.index(n)] for n in order], labels=order, alpha=0.85)
    if "total" in names:
        ax.plot(t, ms[:, names.index("total")], color="k", lw=0.8, label="total")
    if len(t) > 10:  # the first steps include the kernels' compile or cache load: clip them
        top = float(np.percentile(ms[:, names.index("total")] if "total" in names else ms.sum(1), 99))
        ax.set_ylim(0.0, 1.5 * top if top > 0 else 1.0)
    ax.set_ylabel("ms per step")
    ax.legend(loc="upper left", fontsize=7, ncol=3)


def _elastic_energy(ax, rec):
    from tumble.recording import ELASTIC_ENERGY_COLUMNS

    t, e = rec.step_time, np.array(rec.step_elastic_energy, dtype=float)
    if len(e):
        e[:, 2] -= e[0, 2]  # potential relative to the first step (as in energy.png)
    for k, name in enumerate(ELASTIC_ENERGY_COLUMNS):
        ax.plot(t, e[:, k], label=name + (" − first step" if name == "potential" else ""), lw=1.0)
    ax.plot(t, e.sum(axis=1), color="k", lw=1.2, label="total")
    ax.set_ylabel("elastic bodies' energy [J]")
    ax.legend(loc="best", fontsize=8)


def _elastic_steps(ax, rec):
    t, n = rec.step_time, np.asarray(rec.step_elastic_substeps)
    ok = n > 0
    ax.semilogy(t[ok], 1000.0 * rec.dt / n[ok], color="C2", label="mean step dt / steps")
    ax.set_ylabel("elastic step [ms]")
    ax2 = ax.twinx()
    ax2.plot(t, n, color="C1", lw=0.8)
    ax2.set_ylabel("elastic steps per step", color="C1")


PANELS = (("energy.png", _energy), ("penetration.png", _penetration), ("merit.png", _merit),
          ("contacts.png", _contacts), ("stages.png", _stages))


def plot(recording, out_dir, *, dpi: int = 110) -> list[Path]:
    """Write the PNGs of :data:`FILES` for ``recording`` (a :class:`Recording` or a path) into
    ``out_dir``; returns their paths."""
    rec = recording if isinstance(recording, Recording) else Recording.load(recording)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plt = _pyplot()
    written = []
    for name, draw in PANELS:
        fig, ax = plt.subplots(figsize=(8, 4))
        draw(ax, rec)
        ax.set_xlabel("time [s]")
        ax.set_title(_title(rec), fontsize=10)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(out / name, dpi=dpi)
        plt.close(fig)
        written.append(out / name)
    fig, axes = plt.subplots(len(PANELS), 1, figsize=(9, 2.6 * len(PANELS)), sharex=True)
    for ax, (_name, draw) in zip(axes, PANELS):
        draw(ax, rec)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle(_title(rec), fontsize=11)
    fig.tight_layout()
    fig.savefig(out / "summary.png", dpi=dpi)
    plt.close(fig)
    written.append(out / "summary.png")
    if rec.elastic_body_count:
        for name, draw in zip(ELASTIC_FILES, (_elastic_energy, _elastic_steps)):
            fig, ax = plt.subplots(figsize=(8, 4))
            draw(ax, rec)
            ax.set_xlabel("time [s]")
            ax.set_title(_title(rec), fontsize=10)
            ax.grid(alpha=0.3)
            fig.tight_layout()
            fig.savefig(out / name, dpi=dpi)
            plt.close(fig)
            written.append(out / name)
    return written
