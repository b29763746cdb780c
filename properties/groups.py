"""The group reductions the built-in properties share: earlc.analysis.reductions,
the public module a plugin imports the same way (kept under this name for the
modules that import it from here)."""
from earlc.analysis.reductions import (exclusive_running_max, first_of_groups, group_max,
                                       group_min, int64_array, member_with_largest, segments)

__all__ = ["segments", "group_max", "group_min", "exclusive_running_max", "first_of_groups",
           "int64_array", "member_with_largest"]
