"""Contact graph and stack layers (Erleben 000 §4).

The contact graph has the dynamic bodies as nodes and an edge for every body pair that shares a
constraint row (contact points, and joints once they are rows too); a row whose other side is a
fixed body (index -1 in ``row_body``) ties its body to the ground.

*Stack height* (000 §4): "the number of bodies in immediate contact that needs to be visited in order
to reach the closest fixed body" -- fixed bodies have height 0 and every dynamic body the length of
its shortest graph path to one, found by one breadth-first traversal started from all fixed bodies
at once. Bodies that no path reaches (free-floating groups) get the largest height found, as in the
paper ("free-floating bodies are simply assigned the maximum stack-height"); if no body touches a
fixed body at all, every body gets height 1.

*Stack layer* i holds the bodies of height i and i + 1 and the rows between them. Every row has a
layer: ``max(h_a, h_b) - 1`` (heights of neighbours differ by at most one, so a row joins heights
i and i + 1, or two bodies of height i + 1). Inside layer i the bodies of height i are the fixated
"bottom-most objects" (Fig. 12); the bodies of height i + 1 are the dynamic ones, so every dynamic
body is solved in exactly one layer (layer ``height - 1``) and acts as an immovable base in the next.
With ``rest_order_heights`` (``ShockSettings.layer_rest_order``) the heights are raised so that a body
resting on another is above it; a row's lower side may then be more than one height below, and it is
fixated all the same (every fixation test reads height <= layer).

The graph is rebuilt every step from the rows in O(bodies + rows) (a counting sort into CSR
adjacency, then BFS); rows of one body pair are contiguous (contacts come grouped by manifold), so
only the first row of each run adds an edge.
"""

from __future__ import annotations

import numpy as np

from tumble._core import types as T
from tumble._core.config import kernel


@kernel
def stack_heights(row_count, row_body, body_count, body_fixed, body_height):
    """Fill ``body_height`` (n,) int64 (0 for fixed bodies) and return the number of layers
    (the largest height; 0 when there are no dynamic bodies). Every row is an edge of length 1
    (``articulated_heights`` with no joint rows)."""
    kind = np.full(row_count, T.ROW_CONTACT_NORMAL, dtype=np.int64)
    return articulated_heights(row_count, row_body, kind, np.zeros((0, 2, 6)), np.zeros(3), 0.0, body_count,
                               body_fixed, body_height)


@kernel
def build_layers(row_count, row_body, row_J, row_B, body_height, body_count, body_fixed, layer_count,
                 row_layer, row_block, layer_row_start, layer_rows, layer_inv_diag, layer_body_start, layer_bodies):
    """Sort rows and bodies into layers and compute each row's diagonal with its fixated side removed.

    Within a layer the rows are grouped by *block*: the dynamic body they move (the lower index of
    two dynamic siblings), so a solver can iterate one body's rows together (``row_block``). The
    sorts are counting sorts and stable: a contact's rows stay together, normal first.

    Outputs: ``row_layer`` (rows,) (-1 for a row between two fixed bodies), ``row_block`` (rows,)
    (-1 likewise), ``layer_row_start``
    (layers + 1,), ``layer_rows`` (rows,) row indices layer by layer (``layer_row_start[-1]`` of them);
    ``layer_inv_diag`` (rows,) 1 / (J B)_ii over the dynamic sides only;
    ``layer_body_start`` (layers + 1,), ``layer_bodies`` the dynamic bodies of layer i (height i + 1).
    """
    for i in range(layer_count + 1):
        layer_row_start[i] = 0
        layer_body_start[i] = 0
    for r in range(row_count):
        ha = 0
        hb = 0
        a = row_body[r, 0]
        b = row_body[r, 1]
        if a >= 0:
            ha = body_height[a]
        if b >= 0:
            hb = body_height[b]
        layer = max(ha, hb) - 1
        row_layer[r] = layer
        if layer < 0:            # a row with no dynamic side moves nothing and joins no layer
            layer_inv_diag[r] = 0.0
            row_block[r] = -1
            continue
        if a >= 0 and ha == layer + 1 and (b < 0 or hb != layer + 1 or a < b):
            row_block[r] = a
        else:
            row_block[r] = b
        layer_row_start[layer + 1] += 1
        diag = 0.0
        for side in range(2):
            body = row_body[r, side]
            if body < 0 or body_height[body] <= layer:     # fixated in this layer
                continue
            for k in range(6):
                diag += row_J[r, side, k] * row_B[r, side, k]
        layer_inv_diag[r] = 1.0 / diag if diag > 1e-300 else 0.0
    for i in range(layer_count):
        layer_row_start[i + 1] += layer_row_start[i]
    # rows by block first, then (stably) by layer: grouped by layer, then block, then row index
    block_start = np.zeros(body_count + 1, dtype=np.int64)
    for r in range(row_count):
        if row_block[r] >= 0:
            block_start[row_block[r] + 1] += 1
    for i in range(body_count):
        block_start[i + 1] += block_start[i]
    by_block = np.empty(block_start[body_count], dtype=np.int64)
    for r in range(row_count):
        if row_block[r] >= 0:
            by_block[block_start[row_block[r]]] = r
            block_start[row_block[r]] += 1
    fill = layer_row_start[:-1].copy()
    for k in range(by_block.shape[0]):
        r = by_block[k]
        layer = row_layer[r]
        layer_rows[fill[layer]] = r
        fill[layer] += 1
    for i in range(body_count):
        if not body_fixed[i]:
            layer_body_start[body_height[i]] += 1
    for i in range(layer_count):
        layer_body_start[i + 1] += layer_body_start[i]
    fill = layer_body_start[:-1].copy()
    for i in range(body_count):
        if not body_fixed[i]:
            layer = body_height[i] - 1
            layer_bodies[fill[layer]] = i
            fill[layer] += 1


@kernel
def articulated_heights(row_count, row_body, row_kind, row_J, up, support_cos, body_count, body_fixed, body_height):
    """Stack heights (``stack_heights``) in which bodies joined by a joint count as one node: joint
    rows (types.ROW_JOINT, ROW_LIMIT, ROW_MOTOR) are edges of length 0, contact rows of length 1.
    Returns the number of layers.

    Why: shock propagation fixates the lower body of every row of a layer, which is right for a
    body resting on another (the support does not feel the load during that layer) but not for a
    joint, whose reaction acts both ways. With every joint an edge of length 1, a chain of 20 links
    hanging from a fixed point became 20 layers, each link pulled along by its fixated parent
    without pulling back, and the swinging chain gained 33 % of its energy in 2 s. With length-0
    joint edges an articulation (a chain, a ragdoll) shares one height, so its joints are rows
    between siblings, solved with both bodies movable; contacts still stack the articulations.

    0-1 breadth-first search, level by level: first the closure of the current level over joint
    edges, then the contact neighbours not yet reached start the next level.

    Roots (height 1): bodies with a joint row to a fixed body, and with a contact normal row to a
    fixed body. With ``up`` non-zero (a unit vector against gravity) a contact roots its body only
    if it supports it: the push on the body, the normal row's linear Jacobian n (``row_J``), has
    n . up > ``support_cos`` [tumble, issue 18]. Why: 000 §4 measures height from any fixed body,
    which makes a wall a root. In ``pile1000`` (1000 spheres in a walled box) a sphere against a wall
    1.5 m up got height 1 and was fixated under the spheres beneath it, which then had to get out of
    its way downwards into the layers already solved: the pile never settled (kinetic energy
    ~3 kJ, sphere overlaps of 18 cm after 300 steps). A contact with a wall is still a row of its
    body's layer (the wall side immovable); only the heights change."""
    use_up = up[0] != 0.0 or up[1] != 0.0 or up[2] != 0.0
    jdeg = np.zeros(body_count + 1, dtype=np.int64)
    cdeg = np.zeros(body_count + 1, dtype=np.int64)
    rooted = np.zeros(body_count, dtype=np.bool_)
    for pass_ in range(2):
        if pass_ == 1:
            for i in range(body_count):
                jdeg[i + 1] += jdeg[i]
                cdeg[i + 1] += cdeg[i]
            jfill = jdeg[:-1].copy()
            cfill = cdeg[:-1].copy()
            jadj = np.empty(jdeg[body_count], dtype=np.int64)
            cadj = np.empty(cdeg[body_count], dtype=np.int64)
        pa = -2
        pb = -2
        for r in range(row_count):
            a = row_body[r, 0]
            b = row_body[r, 1]
            if pass_ == 0 and (a < 0) != (b < 0):
                # a row to a fixed body: roots its body if a joint, or a contact that supports it
                side = 0 if a >= 0 else 1
                k = row_kind[r]
                if k == T.ROW_JOINT or k == T.ROW_LIMIT or k == T.ROW_MOTOR:
                    rooted[a if a >= 0 else b] = True
                elif k == T.ROW_CONTACT_NORMAL:
                    push = 0.0
                    if use_up:
                        for c in range(3):
                            push += row_J[r, side, c] * up[c]
                    if not use_up or push > support_cos:
                        rooted[a if a >= 0 else b] = True
            if a == pa and b == pb:
                continue
            pa = a
            pb = b
            if a >= 0 and b >= 0:
                joint = row_kind[r] == T.ROW_JOINT or row_kind[r] == T.ROW_LIMIT or row_kind[r] == T.ROW_MOTOR
                if pass_ == 0:
                    if joint:
                        jdeg[a + 1] += 1
                        jdeg[b + 1] += 1
                    else:
                        cdeg[a + 1] += 1
                        cdeg[b + 1] += 1
                elif joint:
                    jadj[jfill[a]] = b
                    jfill[a] += 1
                    jadj[jfill[b]] = a
                    jfill[b] += 1
                else:
                    cadj[cfill[a]] = b
                    cfill[a] += 1
                    cadj[cfill[b]] = a
                    cfill[b] += 1
    order = np.empty(body_count, dtype=np.int64)
    n = 0
    for i in range(body_count):
        if body_fixed[i]:
            body_height[i] = 0
        elif rooted[i]:
            body_height[i] = 1
            order[n] = i
            n += 1
        else:
            body_height[i] = -1
    highest = 1 if n > 0 else 0
    start = 0
    level = 1
    while start < n:
        # closure of this level over joint edges
        k = start
        while k < n:
            i = order[k]
            k += 1
            for e in range(jdeg[i], jdeg[i + 1]):
                j = jadj[e]
                if body_height[j] < 0:
                    body_height[j] = level
                    order[n] = j
                    n += 1
        end = n
        for k in range(start, end):
            i = order[k]
            for e in range(cdeg[i], cdeg[i + 1]):
                j = cadj[e]
                if body_height[j] < 0:
                    body_height[j] = level + 1
                    order[n] = j
                    n += 1
        start = end
        if n > end:
            level += 1
            highest = level
    if highest == 0:
        highest = 1
    any_dynamic = False
    for i in range(body_count):
        if not body_fixed[i]:
            any_dynamic = True
            if body_height[i] < 0:
                body_height[i] = highest
    return highest if any_dynamic else 0


@kernel
def rest_order_heights(row_count, row_body, row_kind, row_J, up, rest_cos, body_count, body_fixed, body_position,
                       body_height):
    """Raise the stack heights (``articulated_heights``' output, in place) so that a body resting on
    another is above it: for every contact normal row between dynamic bodies a and b whose push on a,
    the row's linear Jacobian n on a's side, has n . up > ``rest_cos`` and whose centre of mass lies
    above b's (up . (x_a - x_b) > 0), h_a >= h_b + 1 afterwards (roots and jointed bodies excepted,
    below). Returns the number of layers (the largest height). [tumble, issue 18; 000 §4 numbers the
    layers by graph distance only.]

    Why: heights by contact distance from the ground put a body above its support by graph distance
    only. In tower_roof's collapse brick 476 (height 23) lay on brick 457 (height 22) with bricks
    496/497 (height 22, reached by a shorter path) lying on it: in 476's layer all three were
    fixated, the layer correction could not satisfy both sides and pushed 476 70 mm down into 457.
    With the "rests on" order the bricks lying on 476 are solved after it, as movable tops.

    The relation is made acyclic by the centres' heights (an edge runs only from a lower centre to a
    higher one), so one pass over the bodies sorted by up . x is the longest-path order: every
    support of a body is final before the body is visited. Heights only grow; a row's layer stays
    max(h_a, h_b) - 1 and its lower side may now be more than one height below (fixated:
    ``rows.movable`` tests height > layer). Bodies with a joint row keep their height (an
    articulation shares one height, ``articulated_heights``), and so do the roots (height 1: a fixed
    body supports them; raised, a letter lying on the incline and on another letter waited for that
    one and inclined_letters' deepest overlap went 7.0 -> 10.6 mm). Cost: a sort of the bodies and
    one pass over the rows."""
    jointed = np.zeros(body_count, dtype=np.bool_)
    deg = np.zeros(body_count + 1, dtype=np.int64)
    for pass_ in range(2):
        if pass_ == 1:
            for i in range(body_count):
                deg[i + 1] += deg[i]
            fill = deg[:-1].copy()
            below = np.empty(deg[body_count], dtype=np.int64)
        for r in range(row_count):
            a = row_body[r, 0]
            b = row_body[r, 1]
            k = row_kind[r]
            if k == T.ROW_JOINT or k == T.ROW_LIMIT or k == T.ROW_MOTOR:
                if pass_ == 0:
                    if a >= 0:
                        jointed[a] = True
                    if b >= 0:
                        jointed[b] = True
                continue
            if k != T.ROW_CONTACT_NORMAL or a < 0 or b < 0 or body_fixed[a] or body_fixed[b]:
                continue
            for side in range(2):
                top = row_body[r, side]
                base = row_body[r, 1 - side]
                push = 0.0
                rise = 0.0
                for c in range(3):
                    push += row_J[r, side, c] * up[c]
                    rise += (body_position[top, c] - body_position[base, c]) * up[c]
                if push > rest_cos and rise > 0.0:
                    if pass_ == 0:
                        deg[top + 1] += 1
                    else:
                        below[fill[top]] = base
                        fill[top] += 1
    level = np.empty(body_count)
    for i in range(body_count):
        level[i] = 0.0
        for c in range(3):
            level[i] += body_position[i, c] * up[c]
    order = np.argsort(level, kind="mergesort")
    highest = 0
    for k in range(body_count):
        i = order[k]
        if body_fixed[i]:
            continue
        if not jointed[i] and body_height[i] != 1:
            h = body_height[i]
            for e in range(deg[i], deg[i + 1]):
                hb = body_height[below[e]] + 1
                if hb > h:
                    h = hb
            body_height[i] = h
        if body_height[i] > highest:
            highest = body_height[i]
    return highest
