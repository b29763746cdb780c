"""earlc's results in the formats other tools read.

    cube       a Report as a CUBE4 file (.cubex) for Cube and Scalasca users
    perfetto   a Trace (and its wait states) as Chrome trace-event JSON for Perfetto
    hatchet    a Report as a hatchet GraphFrame (optional dependency)
    html       a Report as one self-contained HTML page

Each module is imported on use, so the optional dependencies of one never
affect the others.
"""
