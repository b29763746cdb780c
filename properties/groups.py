"""The group reductions the built-in properties share: earlc.analysis.reductions,
the public module a plugin imports the same way (kept under this name for the
modules that import it from here), and the member of a collective instance a
waiting member waits for."""
import numpy as np

from earlc.analysis.reductions import (exclusive_running_max, first_of_groups, group_max,
                                       group_min, int64_array, segments)


def member_with_largest(m, key: np.ndarray) -> np.ndarray:
    """Per member of collective instances (Instances with an "instance" column,
    rows sorted by it): the `where` (its call) of the member of the same
    instance with the largest key (the first such row on ties): the member a
    waiting one waits for, which a picture joins to it by an arrow."""
    instance = m["instance"]
    best = first_of_groups(instance, key)  # ascending by instance
    return m.where[best[np.searchsorted(instance[best], instance)]]


__all__ = ["segments", "group_max", "group_min", "exclusive_running_max", "first_of_groups",
           "int64_array", "member_with_largest"]
