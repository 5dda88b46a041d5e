"""Contact springs against the floor (paper 003 §7.2).

When a vertex is found crossing the floor plane (events.py), a "sticky" zero-rest-length spring is tied
between the vertex and the floor point where it arrived: energy k/2 |x - anchor|^2 (the paper writes K L^2,
K = k/2), force -k (x - anchor). The spring stays tied to the same floor point (no sliding; rolling is
possible as springs are added at the front and removed at the back of the contact). It is removed as soon
as it pulls, i.e. when the vertex is back above the anchor's plane: n . (x - anchor) > 0. The energy it
still holds then (mostly its tangential stretch) leaves the mechanical energy and is booked as dissipated.

State, one spring per vertex at most (SoA over vertices): ``spring_alive`` (n,) bool, ``spring_anchor``
(n, 3) m.
"""

from __future__ import annotations

from tumble._core.config import kernel


@kernel
def spring_forces(positions, spring_alive, spring_anchor, stiffness, forces):
    """Add -k (x - anchor) for every live spring to ``forces`` (n, 3); return the springs' energy (J)."""
    energy = 0.0
    for i in range(positions.shape[0]):
        if not spring_alive[i]:
            continue
        for c in range(3):
            stretch = positions[i, c] - spring_anchor[i, c]
            forces[i, c] -= stiffness * stretch
            energy += 0.5 * stiffness * stretch * stretch
    return energy


@kernel
def remove_pulling_springs(positions, spring_alive, spring_anchor, stiffness, plane_normal):
    """Remove every live spring that pulls the vertex towards the floor (n . (x - anchor) > 0); return
    (springs removed, the energy they held, J)."""
    removed = 0
    released = 0.0
    for i in range(positions.shape[0]):
        if not spring_alive[i]:
            continue
        height = 0.0
        sq = 0.0
        for c in range(3):
            stretch = positions[i, c] - spring_anchor[i, c]
            height += plane_normal[c] * stretch
            sq += stretch * stretch
        if height > 0.0:
            spring_alive[i] = False
            removed += 1
            released += 0.5 * stiffness * sq
    return removed, released
