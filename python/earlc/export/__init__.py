"""earlc's results in the formats other tools read.

    cube       a Report as a CUBE4 file (.cubex) for Cube and Scalasca users
    perfetto   a Trace (and its wait states) as Chrome trace-event JSON for Perfetto
    hatchet    a Report as a hatchet GraphFrame (optional dependency)
    html       a Report as one self-contained HTML page

Each takes what it exports and a path: `cube.write(report, path)`,
`html.write(report, path)` (`html.render(report)`: the page as a string),
`hatchet.graphframe(report)`, `perfetto.write_perfetto(trace, path, ...)`; a
Report's to_cube, to_html and to_hatchet are thin wrappers of them.  The
exporters depend on the model (the report, the trace) and nothing of the
analysis's workings.  Each module is imported on use, so the optional
dependencies of one never affect the others.
"""
