"""Checks of a timeline picture by its pixels, shared by the tests (tests/python/
test_plot.py, on the real traces and generated ones) and `make bench` (on a
10-million-event trace):

- no row is covered by message lines beyond a share of its pixels (the picture
  drawn with and without messages, compared pixel by pixel);
- every activity the drawn locations spend time in within the window shows in
  the picture (found here from each location's events, independently of the C
  core's raster);
- each row's wait-state strip shows only wait states of that row's location;
- the legend lies wholly inside the picture.
"""
import numpy as np

import earlc
from earlc import overview as ov
from earlc.plot.style import (ACTIVITY_COLOURS, IDLE_COLOUR, property_colour)

#: no row may be covered by message lines beyond this share of its pixels
MAX_MESSAGE_SHARE = 0.2


def rgb(colour):
    from matplotlib.colors import to_rgb

    return tuple(int(round(c * 255)) for c in to_rgb(colour))


def render(fig) -> np.ndarray:
    """The figure's pixels (height, width, 3), top row first."""
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()


def row_boxes(fig, n_rows, part=(0.0, 1.0)):
    """Per row: (top, bottom, left, right) pixel bounds in the rendered image of
    the part of the row between the fractions `part` of its height (from its top)."""
    ax = fig.axes[0]
    height = fig.canvas.get_width_height()[1]
    x0, x1 = ax.get_xlim()
    out = []
    for r in range(n_rows):
        (left, top), (right, bottom) = ax.transData.transform(
            [(x0, r - 0.5 + part[0]), (x1, r - 0.5 + part[1])])
        out.append((int(np.ceil(height - top)), int(np.floor(height - bottom)),
                    int(np.ceil(left)), int(np.floor(right))))
    return out


def message_shares(with_messages: np.ndarray, without: np.ndarray, boxes):
    """Per row, the share of its pixels that the message lines changed."""
    changed = np.any(with_messages != without, axis=2)
    return [float(changed[t:b, l:r].mean()) if b > t and r > l else 0.0
            for t, b, l, r in boxes]


def activities_in_window(trace, first: int, last: int, locations):
    """Per location, the set of activity ids in which it spends time inside
    [first, last]: from its own events (numpy), not from the C raster."""
    ev = trace.events
    table = ov.activity_table(trace)
    enter, leave = earlc.KINDS["ENTER"], earlc.KINDS["LEAVE"]
    out = {}
    for loc in locations:
        ids = ev.of_location(loc)
        if len(ids) < 2:
            out[loc] = set()
            continue
        kind = ev.kind[ids]
        ptr = trace.states.enterptr_of(ids)
        # the innermost region the location itself has open after each event
        own = np.where(kind == enter, ids, ptr)
        closing = kind == leave
        own[closing] = np.where(ptr[closing] >= 0,
                                trace.states.enterptr_of(np.maximum(ptr[closing], 0)), -1)
        ok = own >= 0
        ok[ok] = ev.location[own[ok]] == loc
        t = ev.time[ids].astype(np.int64)
        a, b = np.maximum(t[:-1], first), np.minimum(t[1:], last)
        has = (b > a) & ok[:-1]
        region = ev.region_of(own[:-1][has]).astype(np.int64)
        region = np.minimum(region, len(table) - 1)
        out[loc] = set(np.unique(table[region]).tolist())
    return out


def colours_in(image, box) -> set:
    t, b, l, r = box
    part = image[t:b, l:r].reshape(-1, 3)
    return {tuple(int(v) for v in c) for c in np.unique(part, axis=0)}


def check_picture(trace, report=None, start=None, end=None, locations=None,
                  max_message_share=MAX_MESSAGE_SHARE):
    """Draw the timeline (with and without messages) and assert the checks of the
    module's docstring; returns what was measured."""
    from earlc.plot import plot_timeline
    from earlc.plot.timeline import BAND, STRIP
    from earlc.timeline import Window, window_ticks

    fig = plot_timeline(trace, None, start=start, end=end, locations=locations, report=report,
                        metrics=False)
    bare = plot_timeline(trace, None, start=start, end=end, locations=locations, report=report,
                         metrics=False, messages=False)
    first, last = window_ticks(trace, start, end)
    rows = Window(trace, first, last, locations).locations.tolist()
    image, plain_image = render(fig), render(bare)
    whole = row_boxes(fig, len(rows))
    shares = message_shares(image, plain_image, whole)
    assert max(shares + [0.0]) <= max_message_share, shares

    want = activities_in_window(trace, first, last, rows)
    bands = row_boxes(bare, len(rows), BAND)
    palette = {k: rgb(ACTIVITY_COLOURS[name]) for k, name in enumerate(ov.ACTIVITIES)}
    everywhere = set()
    for box in bands:
        everywhere |= colours_in(plain_image, box)
    missing = [ov.ACTIVITIES[k] for k in set().union(*want.values()) if palette[k] not in everywhere]
    assert not missing, "activities present but not drawn: %s" % missing

    # a row's strip shows wait states of its own location only
    win = Window(trace, first, last, locations)
    waits = win.wait_states(report)
    own = {loc: {rgb(property_colour(waits.names[p]))
                 for p in np.unique(waits.prop[waits.location == loc]).tolist()}
           for loc in rows}
    allowed_background = {(255, 255, 255)}
    for loc, (t, b, l, r) in zip(rows, row_boxes(bare, len(rows),
                                                 (STRIP[0] + 0.02, STRIP[1] - 0.02))):
        extra = colours_in(plain_image, (t, b, l + 2, r - 2)) - own[loc] - allowed_background
        assert not extra, (loc, extra)

    # the legend is inside the picture
    height_px = fig.canvas.get_width_height()[1]
    renderer = fig.canvas.get_renderer()
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        assert box.x0 >= 0 and box.y0 >= 0, box
        assert box.x1 <= fig.bbox.width and box.y1 <= height_px, box
    return {"message_shares": shares, "activities": want, "figure": fig, "image": image,
            "plain_image": plain_image, "rows": rows, "idle": rgb(IDLE_COLOUR)}
