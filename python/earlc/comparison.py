"""Runs compared: what changed between two or more analyses of the same program.

    c = earlc.compare("before/traces.otf2", "after/traces.otf2")   # paths, traces or reports
    c.table                 # DataFrame: (metric, callpath) x one column per run
    c.changes()             # difference and ratio to the first run, what grew most first
    print(c.to_text())
    c.plot("changes.png")   # the top changes as bars
    c.to_thicket()          # one Thicket with a profile per run (llnl-thicket)

Runs are aligned by names, never by ids: a metric by its name (`late_sender`), a call
path by the names of its regions from the root (`main/iteration/MPI_Recv`), so two
traces of one program line up whatever order their definitions came in.  Values are
summed over locations.  When the runs have different numbers of processes, every value
is also compared per process (divided by the run's processes), which is how a
weak-scaling pair is read; `changes()` ranks by the per-process difference then, by the
total otherwise.  docs/workflow.md has the rules.
"""
from __future__ import annotations

import os
from typing import List, Optional, Sequence

import numpy as np

from ._core import Error

#: call path label of a metric's total over all call paths
TOTAL = "(all call paths)"


class CompareError(Error, ValueError):
    """Runs that cannot be compared (no call path in common, fewer than two runs,
    labels that repeat): the message says what to change."""


def _label(run, k: int) -> str:
    path = getattr(run, "path", None) or getattr(getattr(run, "trace", None), "path", None)
    if path is None:
        return "run %d" % (k + 1)
    path = os.path.abspath(path)
    folder = os.path.basename(os.path.dirname(path)) if path.endswith(".otf2") else \
        os.path.basename(path)
    return folder or "run %d" % (k + 1)


def _unique(labels: List[str]) -> List[str]:
    seen = {}
    out = []
    for lab in labels:
        n = seen.get(lab, 0)
        seen[lab] = n + 1
        out.append(lab if n == 0 else "%s (%d)" % (lab, n + 1))
    return out


def _processes(trace, view=None) -> int:
    """Processes of a run: its MPI ranks (of a view: those of its locations), or its
    location groups without MPI."""
    locs = [trace.locations[int(k)] for k in view.location_indices] if view is not None \
        else list(trace.locations)
    ranks = {l.rank for l in locs if l.rank is not None and l.rank >= 0}
    return len(ranks) or len({l.process.id for l in locs}) or 1


class Run:
    """One compared run: its report, label and number of processes, and its values
    per (metric, callpath) summed over locations (exact integers)."""

    def __init__(self, report, label: str):
        self.report = report
        self.label = label
        self.trace = report.trace
        self.view = getattr(report, "view", None)
        self.processes = _processes(report.trace, self.view)
        self.units = {p.name: p.unit for p in report.properties}
        self.titles = {p.name: p.title for p in report.properties}
        values = {}
        paths = report.callpaths
        for p in report.properties:
            c, _, v = report.cells(p.name)
            if not len(c):
                values[(p.name, TOTAL)] = 0
                continue
            keys, sums = np.unique(c, return_inverse=True)
            totals = np.bincount(sums, weights=v.astype(np.float64))  # exact below 2**53
            for cn, val in zip(keys.tolist(), totals.tolist()):
                key = (p.name, paths[cn])
                values[key] = values.get(key, 0) + int(val)
            values[(p.name, TOTAL)] = int(report.total(p.name))
        self.values = values
        self.callpaths = {cp for _, cp in values if cp != TOTAL}


class Comparison:
    """Two or more runs aligned by metric and call path (see the module doc)."""

    def __init__(self, runs: Sequence[Run]):
        self.runs = list(runs)
        self.labels = [r.label for r in self.runs]
        self.processes = [r.processes for r in self.runs]
        self.units = {}
        self.titles = {}
        for r in self.runs:
            self.units.update(r.units)
            self.titles.update(r.titles)

    @property
    def different_scale(self) -> bool:
        """Whether the runs have different numbers of processes."""
        return len(set(self.processes)) > 1

    def _frame(self, per_process: bool):
        import pandas as pd

        keys = sorted({k for r in self.runs for k in r.values},
                      key=lambda k: (self._metric_order(k[0]), k[1] != TOTAL, k[1]))
        data = {}
        for r in self.runs:
            col = []
            for metric, path in keys:
                v = r.values.get((metric, path), 0)
                if self.units.get(metric) == "sec":
                    v = v / r.trace.timer_resolution
                col.append(v / r.processes if per_process else v)
            data[r.label] = col
        index = pd.MultiIndex.from_tuples(keys, names=["metric", "callpath"])
        return pd.DataFrame(data, index=index)

    def _metric_order(self, name: str) -> int:
        for r in self.runs:
            for k, p in enumerate(r.report.properties):
                if p.name == name:
                    return k
        return 1 << 30

    @property
    def table(self):
        """DataFrame indexed by (metric, callpath), one column per run: seconds for
        time metrics, counts and bytes as they are, summed over locations; the
        callpath "(all call paths)" holds the metric's total."""
        return self._frame(per_process=False)

    @property
    def per_process(self):
        """The table divided by each run's number of processes."""
        return self._frame(per_process=True)

    def changes(self, basis: Optional[str] = None, metrics: Optional[Sequence[str]] = None,
                callpaths: bool = True):
        """Per (metric, callpath): the first run's value (`base`), and for every other
        run its value, the difference to the base (`diff: LABEL`) and the ratio
        (`ratio: LABEL`, inf where the base is 0 and NaN where both are), in the
        basis "total" or "per_process" (default: per process when the process counts
        differ).  Sorted by the largest growth over the runs, the metric totals
        (callpath "(all call paths)") included; callpaths=False keeps only those."""
        basis = basis or ("per_process" if self.different_scale else "total")
        if basis not in ("total", "per_process"):
            raise ValueError("basis must be 'total' or 'per_process', not %r" % (basis,))
        t = self._frame(per_process=basis == "per_process")
        if metrics is not None:
            t = t[t.index.get_level_values("metric").isin(list(metrics))]
        if not callpaths:
            t = t[t.index.get_level_values("callpath") == TOTAL]
        base_label = self.labels[0]
        base = t[base_label].to_numpy(dtype=np.float64)
        out = t[[base_label]].rename(columns={base_label: "base"}).copy()
        growth = np.full(len(t), -np.inf)
        for lab in self.labels[1:]:
            v = t[lab].to_numpy(dtype=np.float64)
            diff = v - base
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(base != 0, v / np.where(base != 0, base, 1),
                                 np.where(v != 0, np.inf, np.nan))
            out[lab] = v
            out["diff: " + lab] = diff
            out["ratio: " + lab] = ratio
            growth = np.maximum(growth, diff)
        out.insert(0, "unit", [self.units.get(m, "") for m in out.index.get_level_values(0)])
        # times first (in seconds), then counts and bytes, each by its growth: values
        # of different units are not ranked against each other
        out["_time"] = out["unit"] != "sec"
        out["_growth"] = growth
        out = out.sort_values(["_time", "_growth"], ascending=[True, False],
                              kind="stable").drop(columns=["_time", "_growth"])
        out.attrs["basis"] = basis
        return out

    def top_changes(self, n: int = 10, basis: Optional[str] = None, inefficiencies: bool = True):
        """The n (metric, call path) rows of changes() that grew or shrank most (by the
        largest |difference| over the runs; rows that did not change are left out),
        with inefficiencies=True only the properties detected as occurrences (wait
        states, idleness, overheads), not the plain times."""
        c = self.changes(basis)
        if inefficiencies:
            detected = set()
            for r in self.runs:
                detected |= {p.name for p in r.report.properties
                             if p.region_class is None and p.unit == "sec"
                             and p.name in r.report.worst}
            c = c[c.index.get_level_values("metric").isin(detected)]
        c = c[c.index.get_level_values("callpath") != TOTAL]
        diffs = c[["diff: " + lab for lab in self.labels[1:]]].abs()
        size = diffs.max(axis=1)
        c = c[size > 0]
        return c.loc[size[size > 0].sort_values(ascending=False, kind="stable").index[:n]]

    def to_text(self, top: int = 15) -> str:
        """The runs, then the changes that grew most (time metrics in seconds)."""
        from .readable import seconds_text

        basis = "per_process" if self.different_scale else "total"
        lines = ["earlc compare: %d runs%s" % (len(self.runs), "; different process counts: "
                                               "values compared per process"
                                               if self.different_scale else "")]
        for r in self.runs:
            lines.append("  %-24s %4d processes, %d events, %s%s" % (
                r.label, r.processes, len(r.view if r.view is not None else r.trace),
                r.trace.path, " (a view)" if r.view is not None else ""))
        c = self.changes(basis)
        c = c[c.index.get_level_values("callpath") != TOTAL]
        per = "per process" if basis == "per_process" else "total over all processes"
        waits = self.top_changes(top, basis)
        times = c[c.index.get_level_values("metric") == "time"].head(top)
        for title, shown in (("inefficiencies that changed most", waits),
                             ("time per call path, what grew most", times)):
            lines.append("")
            lines.append("%s (%s), against %s:" % (title, per, self.labels[0]))
            lines += self._rows(shown) or ["  (none)"]
        return "\n".join(lines)

    def _rows(self, shown) -> List[str]:
        from .readable import seconds_text

        lines = []
        for (metric, path), row in shown.iterrows():
            unit = row["unit"]
            parts = []
            for lab in self.labels[1:]:
                d, ratio = row["diff: " + lab], row["ratio: " + lab]
                d_text = seconds_text(d) if unit == "sec" else "%+.6g" % d
                if unit == "sec" and d > 0:
                    d_text = "+" + d_text
                how = ("x%.2f" % ratio if ratio > 0 else "gone") if np.isfinite(ratio) \
                    else "new"
                parts.append("%s %s (%s)" % (lab, d_text, how))
            lines.append("  %-26s %-48s %s" % (metric, _short(path), "; ".join(parts)))
        return lines

    def plot(self, path=None, top: int = 12, basis: Optional[str] = None):
        """A horizontal bar chart of the top changes of the inefficiencies: per
        (property, call path) the difference of each run to the first.  Returns the
        Figure; saves it to path (needs matplotlib)."""
        from .plot.style import PROPERTY_COLOURS, new_figure, plain, save, time_unit

        c = self.top_changes(top, basis)
        basis = c.attrs.get("basis", basis or "total")
        rows = list(c.index)
        fig = new_figure(11.0, 1.6 + 0.42 * max(len(rows), 1))
        ax = fig.add_subplot(1, 1, 1)
        others = self.labels[1:]
        diffs = np.array([[c["diff: " + lab].iloc[k] for lab in others]
                          for k in range(len(rows))]) if rows else np.zeros((0, len(others)))
        span = float(np.abs(diffs).max()) if diffs.size else 1.0
        factor, unit = time_unit(span if span > 0 else 1.0)
        h = 0.8 / max(len(others), 1)
        for j, lab in enumerate(others):
            y = np.arange(len(rows)) + (j - (len(others) - 1) / 2) * h
            v = diffs[:, j] * factor if len(rows) else []
            ax.barh(y, v, height=h, color=PROPERTY_COLOURS[(j + 1) % len(PROPERTY_COLOURS)],
                    label=plain("%s - %s" % (lab, self.labels[0])))
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([plain("%s  %s" % (self.titles.get(m, m), _short(p)))
                            for m, p in rows], fontsize=8)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_xlabel("change of the time lost (%s%s)" % (
            unit, ", per process" if basis == "per_process" else ""))
        fig.suptitle(plain("earlc compare: the %s of the time lost in wait states, against %s"
                           % ("largest change" if len(rows) == 1 else
                              "%d largest changes" % len(rows), self.labels[0])), fontsize=9)
        if not rows:
            ax.text(0.5, 0.5, "no inefficiency changed", ha="center", va="center",
                    transform=ax.transAxes)
        ax.legend(fontsize=8, framealpha=0.9, loc="best")
        width = max([len("%s  %s" % (self.titles.get(m, m), _short(p))) for m, p in rows] + [10])
        fig.subplots_adjust(left=min(0.05 + 0.0062 * width, 0.5), right=0.97,
                            top=1 - 0.45 / fig.get_figheight(),
                            bottom=0.6 / fig.get_figheight() + 0.02)
        save(fig, path)
        return fig

    def to_thicket(self):
        """One Thicket (llnl-thicket) with a profile per run, each from the run's
        report.to_hatchet(); the profiles are named by the run labels."""
        from .optional import require

        require("thicket", "comparison.to_thicket()", "llnl-thicket")
        import warnings

        from thicket import Thicket

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parts = []
            for r in self.runs:
                parts.append(Thicket.thicketize_graphframe(r.report.to_hatchet(), r.label))
            tk = Thicket.concat_thickets(parts, disable_tqdm=True)
        # the profiles are hashed names: a column says which run each one is
        tk.metadata["run"] = [tk.profile_mapping.get(p, str(p)) for p in tk.metadata.index]
        return tk

    def __repr__(self) -> str:
        return "<earlc.Comparison of %s>" % ", ".join(
            "%s (%d processes)" % (lab, p) for lab, p in zip(self.labels, self.processes))


def _short(path: str, width: int = 48) -> str:
    return path if len(path) <= width else "..." + path[-(width - 3):]


def compare(*runs, labels: Optional[Sequence[str]] = None, properties=None, progress=None,
            threads: int = 0, salvage: bool = False) -> Comparison:
    """Compare two or more runs: each a trace path, an earlc.Trace (or a view) or an
    earlc.Report (see the module doc).  Traces are analysed with the default catalog
    (or `properties`; `salvage` as for earlc.open).  Raises CompareError when the runs
    share no call path."""
    from . import open as open_trace
    from .analysis import Report, analyze

    if len(runs) == 1 and isinstance(runs[0], (list, tuple)):
        runs = tuple(runs[0])
    if len(runs) < 2:
        raise CompareError("compare needs two runs or more, not %d" % len(runs))
    if labels is not None and len(labels) != len(runs):
        raise CompareError("%d labels for %d runs" % (len(labels), len(runs)))
    reports = []
    for run in runs:
        if isinstance(run, Report):
            reports.append(run)
            continue
        if isinstance(run, (str, os.PathLike)):
            run = open_trace(run, threads=threads, progress=progress, salvage=salvage)
        reports.append(analyze(run, properties=properties, progress=progress))
    names = list(labels) if labels is not None else _unique(
        [_label(r.trace, k) for k, r in enumerate(reports)])
    if len(set(names)) != len(names):
        raise CompareError("the labels must differ: %s" % ", ".join(names))
    compared = [Run(rep, lab) for rep, lab in zip(reports, names)]
    common = set.intersection(*(r.callpaths for r in compared))
    if not common:
        raise CompareError("the runs share no call path (%s): they are traces of different "
                           "programs, or their regions are named differently"
                           % "; ".join("%s: %s" % (r.label, ", ".join(sorted(r.callpaths)[:3])
                                                   or "none") for r in compared))
    return Comparison(compared)


__all__ = ["compare", "Comparison", "CompareError", "Run", "TOTAL"]
