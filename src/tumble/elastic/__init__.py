"""Tetrahedral finite-element elastic bodies (paper 003, Liesenfeld and Stolfi 1996), standalone.

    mesh.py         TetMesh: rest shape, generators, tetgen/meshio import, quality checks
    material.py     ElasticMaterial (density, bulk and shear moduli, bulk and shear viscosities)
    energy.py       strain C = B A^-1, invariants, the non-inverting energy (eq. 15) and its forces (kernel)
    hessian.py      the energy's exact second derivative per tet (kernel), for Newton
    viscosity.py    viscous forces and power loss (eq. 16, kernel)
    mass.py         consistent mass matrix (eq. 18), factored once
    constraints.py  pinned / prescribed vertices: Lagrange multipliers (eq. 5-8) or springs (§3.1)
    events.py       Hermite + Bernstein-Bezier crossing detection (§6.2, kernel)
    contact.py      sticky floor contact springs (§7.2, kernels)
    rkf45.py        Runge-Kutta-Fehlberg 4(5) (§8.3);  implicit.py: backward Euler + Newton
    body.py         ElasticBody;  system.py: ElasticSystem (state, forces, event loop, energies, counters)
    coupling.py     penalty contact between surface vertices and rigid geoms, the rigid bodies' response (kernels)
    world_link.py   ElasticBodies: a World's elastic bodies, stepped after the rigid solver (World.add_elastic_body)
"""

from tumble.elastic.body import ElasticBody
from tumble.elastic.material import ElasticMaterial
from tumble.elastic.mesh import TetMesh
from tumble.elastic.system import ElasticSystem

__all__ = ["ElasticBody", "ElasticMaterial", "ElasticSystem", "TetMesh"]
