"""Batch generation (004 §3.1, digest §1.3): connected components of the dynamic bodies through their
contacts. Fixed bodies are barriers: they join no components, and a contact with a fixed body belongs
to its dynamic partner's batch. Batches are independent, so penetration correction and resolution run
once per batch, and on different cores (``assign_bins``).
"""

from __future__ import annotations

import numpy as np

from tumble._core.config import kernel


@kernel(exact=True)
def _find(parent, i):
    while parent[i] != i:  # path halving
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@kernel(exact=True)
def build_batches(nbodies, body_fixed, ncontacts, contact_body_a, contact_body_b, body_batch, contact_batch,
                  batch_contact_start, batch_contacts, batch_body_start, batch_bodies, body_contact_start,
                  body_contacts):
    """Label the batches. Returns their number B.

    Out (caller-sized): body_batch (n,) batch of each dynamic body with a contact (-1 otherwise);
    contact_batch (m,); batch_contact_start (B + 1,) into batch_contacts (m,) (contacts of a batch in
    increasing index order); batch_body_start (B + 1,) into batch_bodies (n,) (bodies in increasing
    id order); body_contact_start (n + 1,) into body_contacts (2 m,): the contacts of each DYNAMIC
    body, increasing (a fixed body's list is empty: its velocity never changes, so no contact is
    affected through it).
    """
    parent = np.arange(nbodies)
    for c in range(ncontacts):
        a, b = contact_body_a[c], contact_body_b[c]
        if body_fixed[a] or body_fixed[b]:
            continue
        ra, rb = _find(parent, a), _find(parent, b)
        if ra != rb:  # the smaller root wins: labels do not depend on the contact order
            if ra < rb:
                parent[rb] = ra
            else:
                parent[ra] = rb
    # adjacency of dynamic bodies (counting sort by body)
    for i in range(nbodies + 1):
        body_contact_start[i] = 0
    for c in range(ncontacts):
        a, b = contact_body_a[c], contact_body_b[c]
        if not body_fixed[a]:
            body_contact_start[a + 1] += 1
        if not body_fixed[b]:
            body_contact_start[b + 1] += 1
    for i in range(nbodies):
        body_contact_start[i + 1] += body_contact_start[i]
    fill = body_contact_start[:nbodies].copy()
    for c in range(ncontacts):
        a, b = contact_body_a[c], contact_body_b[c]
        if not body_fixed[a]:
            body_contacts[fill[a]] = c
            fill[a] += 1
        if not body_fixed[b] and b != a:
            body_contacts[fill[b]] = c
            fill[b] += 1
    # batch ids in order of the lowest body id of each component, for bodies that touch something
    root_batch = np.full(nbodies, -1, np.int64)
    nb = 0
    for i in range(nbodies):
        body_batch[i] = -1
        if body_fixed[i] or body_contact_start[i + 1] == body_contact_start[i]:
            continue
        r = _find(parent, i)
        if root_batch[r] < 0:
            root_batch[r] = nb
            nb += 1
        body_batch[i] = root_batch[r]
    for k in range(nb + 1):
        batch_contact_start[k] = 0
        batch_body_start[k] = 0
    for c in range(ncontacts):
        a = contact_body_a[c]
        d = a if not body_fixed[a] else contact_body_b[c]
        contact_batch[c] = body_batch[d]
        batch_contact_start[body_batch[d] + 1] += 1
    for i in range(nbodies):
        if body_batch[i] >= 0:
            batch_body_start[body_batch[i] + 1] += 1
    for k in range(nb):
        batch_contact_start[k + 1] += batch_contact_start[k]
        batch_body_start[k + 1] += batch_body_start[k]
    cfill = batch_contact_start[:nb].copy()
    for c in range(ncontacts):
        k = contact_batch[c]
        batch_contacts[cfill[k]] = c
        cfill[k] += 1
    bfill = batch_body_start[:nb].copy()
    for i in range(nbodies):
        k = body_batch[i]
        if k >= 0:
            batch_bodies[bfill[k]] = i
            bfill[k] += 1
    return nb


@kernel(exact=True)
def assign_bins(nbatches, batch_contact_start, active, nbins, bin_start, bin_batches):
    """Share the active batches among ``nbins`` threads (004 §4, Fig. 26's presort): largest first,
    each to the bin with the least work so far (longest-processing-time rule), work = contact count.
    A static split of the bins then keeps every core busy about equally; the result does not depend
    on it (batches are independent). Out: bin_start (nbins + 1,), bin_batches (nbatches,) the batches
    of bin k in decreasing size. Returns the number of active batches."""
    sizes = np.empty(nbatches, np.int64)
    for k in range(nbatches):
        sizes[k] = batch_contact_start[k + 1] - batch_contact_start[k]
    order = np.argsort(-sizes, kind="mergesort")
    load = np.zeros(nbins, np.int64)
    owner = np.full(nbatches, -1, np.int64)
    nactive = 0
    for j in range(nbatches):
        k = order[j]
        if not active[k]:
            continue
        nactive += 1
        best = 0
        for t in range(1, nbins):
            if load[t] < load[best]:
                best = t
        owner[k] = best
        load[best] += sizes[k]
    for t in range(nbins + 1):
        bin_start[t] = 0
    for k in range(nbatches):
        if owner[k] >= 0:
            bin_start[owner[k] + 1] += 1
    for t in range(nbins):
        bin_start[t + 1] += bin_start[t]
    fill = bin_start[:nbins].copy()
    for j in range(nbatches):
        k = order[j]
        if owner[k] >= 0:
            bin_batches[fill[owner[k]]] = k
            fill[owner[k]] += 1
    return nactive


@kernel(exact=True)
def awake_batches(nbatches, batch_body_start, batch_bodies, asleep, out):
    """out[k]: batch k has an awake body (a batch of sleeping bodies is skipped: they cost nothing,
    004 §3.2). Returns the number of such batches."""
    count = 0
    for k in range(nbatches):
        out[k] = False
        for j in range(batch_body_start[k], batch_body_start[k + 1]):
            if not asleep[batch_bodies[j]]:
                out[k] = True
                count += 1
                break
    return count
