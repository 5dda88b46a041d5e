"""Indexed binary min-heap of contact ids, for the closing contacts of Alg. 9 (004 §3.8).

The thesis keeps the closing contacts in an unsorted array for small batches (linear search for the
minimum) and a sorted multiset for large ones; a heap gives both in one structure: minimum O(1),
insert / remove / re-key O(log N), every contact knowing its place (``pos``) so an affected
contact is re-keyed or removed in place. Order: by ``key[c]`` (the normal relative velocity, most
negative = fastest closing first, Eq. 3.6.1), ties by the lower contact id, so the sequence is
deterministic and equals a linear scan's.

The heap of one batch lives in ``heap[base:base + size]``; ``pos[c]`` is c's index in it or -1.
Batches use disjoint slices and disjoint contacts, so batches may run in parallel.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def _less(key, c, d):
    return key[c] < key[d] or (key[c] == key[d] and c < d)


@njit(cache=True, inline="always")
def heap_sift_up(heap, base, pos, key, i):
    c = heap[base + i]
    while i > 0:
        p = (i - 1) >> 1
        d = heap[base + p]
        if not _less(key, c, d):
            break
        heap[base + i] = d
        pos[d] = i
        i = p
    heap[base + i] = c
    pos[c] = i


@njit(cache=True, inline="always")
def heap_sift_down(heap, base, size, pos, key, i):
    c = heap[base + i]
    while True:
        l = 2 * i + 1
        if l >= size:
            break
        m = l
        if l + 1 < size and _less(key, heap[base + l + 1], heap[base + l]):
            m = l + 1
        d = heap[base + m]
        if not _less(key, d, c):
            break
        heap[base + i] = d
        pos[d] = i
        i = m
    heap[base + i] = c
    pos[c] = i


@njit(cache=True, inline="always")
def heap_push(heap, base, size, pos, key, c):
    """Insert contact c (not in the heap); returns the new size."""
    heap[base + size] = c
    pos[c] = size
    heap_sift_up(heap, base, pos, key, size)
    return size + 1


@njit(cache=True, inline="always")
def heap_remove(heap, base, size, pos, key, c):
    """Remove contact c (in the heap); returns the new size."""
    i = pos[c]
    size -= 1
    pos[c] = -1
    if i == size:
        return size
    last = heap[base + size]
    heap[base + i] = last
    pos[last] = i
    heap_sift_up(heap, base, pos, key, i)
    heap_sift_down(heap, base, size, pos, key, pos[last])
    return size


@njit(cache=True, inline="always")
def heap_rekey(heap, base, size, pos, key, c):
    """Restore the order after key[c] changed (c in the heap)."""
    heap_sift_up(heap, base, pos, key, pos[c])
    heap_sift_down(heap, base, size, pos, key, pos[c])
