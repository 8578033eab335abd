"""Monotone region partitioning (Recast's ``rcBuildRegionsMonotone``).

Rows are swept one at a time along +z. Within a row, consecutive same-area
spans along +x form runs. A run continues the region of the previous row when
all of its -z contacts are with that single region and that region touches no
other run of this row; otherwise the run starts a new region. The regions are
therefore monotone in z and never need a distance field. The result then goes
through the same merge and filter step as the watershed partition (Recast's
``mergeAndFilterRegions``). With ``border_size > 0`` the tile border is first
painted with ids 1..4 | ``BORDER_REG`` and the sweep skips it.
"""

from __future__ import annotations

import numpy as np

from navkit._jit import njit
from navkit.errors import BuildError
from navkit.recast.regions_common import (
    _merge_and_filter,
    _paint_borders,
    _sweep_rows,
    check_chf,
    check_region_args,
)
from navkit.recast.types import CompactHeightfield

__all__ = ["build_regions_monotone"]


@njit
def _kernel(cidx, ccount, con, areas, w, h, border_size, min_area, merge_area):
    """Returns (reg, max_regions, status); status -1 = region id overflow."""
    reg = np.zeros(con.shape[0], np.uint16)
    next_id = 1
    if border_size > 0:
        next_id = _paint_borders(cidx, ccount, areas, w, h, border_size, reg)
    next_id = _sweep_rows(cidx, ccount, con, areas, w, h, border_size, reg, next_id)
    if next_id >= 0xFFFF:
        return reg, 0, -1
    count = _merge_and_filter(
        cidx, ccount, con, areas, w, h, reg, next_id + 1, min_area, merge_area
    )
    return reg, count, 0


def build_regions_monotone(
    chf: CompactHeightfield, *, border_size: int, min_region_area: int, merge_region_area: int
) -> CompactHeightfield:
    """Partition walkable spans into monotone regions (Recast's ``rcBuildRegionsMonotone``).

    Parameters
    ----------
    chf : CompactHeightfield
        Compact heightfield (no distance field needed).
    border_size : int
        Width of the non-navigable tile border [vx]; 0 for solo builds.
    min_region_area : int
        Connected groups of regions with fewer spans are removed [vx^2].
    merge_region_area : int
        Regions with at most this many spans are merged into a neighbour when
        possible [vx^2].

    Returns
    -------
    CompactHeightfield
        A copy with ``reg`` (n,) uint16, ``max_regions`` and ``border_size`` set.

    Raises
    ------
    InputError
        Inconsistent arrays or negative sizes.
    BuildError
        More region ids than 16 bits hold.
    """
    check_region_args(
        border_size, min_region_area=min_region_area, merge_region_area=merge_region_area
    )
    cidx, ccount, con, areas = check_chf(chf)
    reg, count, status = _kernel(
        cidx,
        ccount,
        con,
        areas,
        int(chf.width),
        int(chf.height),
        int(border_size),
        int(min_region_area),
        int(merge_region_area),
    )
    if status < 0:
        raise BuildError("monotone partition: region id overflow (more than 65534 regions)")
    return chf._replace(reg=reg, max_regions=int(count), border_size=int(border_size))
