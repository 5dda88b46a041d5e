"""Removing a body from the core state between steps (``World.remove_body``).

Body ids are handles the user keeps, so they stay stable: the removed body's row stays in the body
store as a tombstone (``body_removed`` True, fixed, zero mass and velocity: no kernel moves it, no
energy or momentum sum sees it) and its id is never reused. Everything that refers to it goes:

* its geoms leave the geom store. The store is compacted in order, so the remaining geoms keep their
  relative order (broad-phase pairs stay sorted by key, 001 §8) and their ids shift down; the broad
  phase re-initialises because the geom count changed, and the fat boxes are rebuilt.
* the last step's contact points that touch it leave the contact store, which is the warm-start cache
  of the next step (``stages.collide`` swaps the stores): the others keep their impulses, with geom
  ids and pair keys renumbered by the same monotone map, so the cache stays sorted and every other
  pair is still warm-started. A solver's own per-contact arrays follow through its
  ``contacts_compacted`` hook.
* joints are the World's (``JointRegistry``) to remove before this runs.

``remove_body`` returns the bodies that touched the removed one in the last step, for the solver's
``remove_body`` hook (004 §3.2 wake-up rule 4: a body whose support disappears wakes up).
"""

from __future__ import annotations

import numpy as np

from tumble._core.collision.narrow_phase import KEY_STRIDE


def remove_body(core, body: int) -> np.ndarray:
    """Tombstone ``body``, drop its geoms and its cached contact points; returns the sorted ids of
    the other bodies it touched in the last step."""
    b, g, c = core.bodies, core.geoms, core.contacts

    # -- its contacts: which points survive, and who touched it
    n_c = c.count
    ba, bb = c.contact_body_a[:n_c], c.contact_body_b[:n_c]
    touching_mask = (ba == body) | (bb == body)
    others = np.concatenate([bb[touching_mask & (ba == body)], ba[touching_mask & (bb == body)]])
    touching = np.unique(others[(others >= 0) & (others != body)])

    # -- its geoms: the old -> new geom id map (monotone on the survivors)
    n_g = g.count
    keep_geom = g.geom_body[:n_g] != body
    new_id = np.cumsum(keep_geom) - 1                       # new id of each surviving old geom
    kept = np.flatnonzero(keep_geom)
    m_g = kept.shape[0]
    for name in g.FIELDS:
        a = getattr(g, name)
        a[:m_g] = a[kept]
        a[m_g:n_g] = g.FIELDS[name][2]                       # freed rows back to the fill value
    g.count = m_g
    core.fat_count = 0                                       # fat boxes rebuilt at the next collide
    core.broad_phase.reset()

    # -- the cache: drop its points, renumber the others' geoms and pair keys
    keep_contact = np.flatnonzero(~touching_mask)
    m_c = keep_contact.shape[0]
    for name in c.FIELDS:
        a = getattr(c, name)
        a[:m_c] = a[keep_contact]
    c.count = m_c
    if m_c:
        ga = new_id[c.contact_geom_a[:m_c]]
        gb = new_id[c.contact_geom_b[:m_c]]
        c.contact_geom_a[:m_c] = ga
        c.contact_geom_b[:m_c] = gb
        c.contact_key[:m_c] = np.minimum(ga, gb) * KEY_STRIDE + np.maximum(ga, gb)
    core.solver.contacts_compacted(core, keep_contact)

    # -- the tombstone
    b.body_removed[body] = True
    b.body_fixed[body] = True
    b.body_mass[body] = 0.0
    b.body_inv_mass[body] = 0.0
    b.body_inv_inertia_local[body] = 0.0
    b.body_inv_inertia_world[body] = 0.0
    b.body_linear_velocity[body] = 0.0
    b.body_angular_velocity[body] = 0.0
    b.body_force[body] = 0.0
    b.body_torque[body] = 0.0
    b.body_contact_count[body] = 0
    return touching
