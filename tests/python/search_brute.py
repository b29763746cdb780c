"""A brute-force pattern evaluator: the reference the C search is checked against.

It knows nothing of the C parser or engine.  A test states a pattern twice: as
text for earlc, and as a Python description for this module - the variables
(name, quantifier, domain) in declaration order and the formula as a Python
function of the bound values.  Domains are computed here from the trace model
(class matching by fnmatch over the location's spellings, the kind name and the
region name; partners from the EARL pointers), the happened-before order from the
explicit graph of hb_graph.py, and the semantics of docs/patterns.md are applied
literally: every assignment of the $ variables (distinct values), kept when some
assignment of the ~ variables makes the formula true for every assignment of the *
variables (values distinct from each other and from the $ and ~ values).
"""
from fnmatch import fnmatchcase
from itertools import product

import numpy as np

import earlc

from hb_graph import reachability

KIND = {name: k for k, name in enumerate(earlc.KIND_NAMES)}


def glob(pattern, s):
    return pattern == "" or fnmatchcase(s, pattern)


class Model:
    """What the evaluator needs of a trace: reachability, regions, partners."""

    def __init__(self, trace):
        self.trace = trace
        self.reach = reachability(trace)
        ev, st = trace.events, trace.states
        self.kind = ev.kind
        self.loc = ev.location
        regions = {r.id: r.name for r in trace.regions}
        enterptr = st.enterptr
        self.region_name = []
        for e in range(len(trace)):
            k = int(ev.kind[e])
            if k in (KIND["ENTER"], KIND["LEAVE"]):
                r = int(ev.region[e])
            elif enterptr[e] >= 0:
                r = int(ev.region[enterptr[e]])
            else:
                r = None
            self.region_name.append(regions.get(r, "") if r is not None else "")
        self.spellings = []
        for l in trace.locations:
            s = [l.name]
            if l.rank >= 0:
                s += ["rank %d" % l.rank, "rank %d thread %d" % (l.rank, l.thread)]
            self.spellings.append(s)
        # partners: send <-> receive, request halves, fork <-> team begin
        self.partners = {}

        def link(a, b):
            self.partners.setdefault(int(a), set()).add(int(b))
            self.partners.setdefault(int(b), set()).add(int(a))

        for r in range(len(trace)):
            s = int(st.sendptr[r])
            if s >= 0:
                link(s, r)
        m = ev.messages
        for e, p in zip(m.event, m.partner):
            if p >= 0:
                link(e, p)
        if np.any(ev.kind == KIND["THREAD_TEAM_BEGIN"]):
            forkptr = st.forkptr
            for e in np.flatnonzero(ev.kind == KIND["THREAD_TEAM_BEGIN"]):
                if forkptr[e] >= 0:
                    link(forkptr[e], e)

    def events(self, proc, kind, text):
        return [e for e in range(len(self.trace))
                if any(glob(proc, s) for s in self.spellings[self.loc[e]])
                and glob(kind, earlc.KIND_NAMES[self.kind[e]])
                and glob(text, self.region_name[e])]

    def before(self, A, B):
        """Some event of A happened before some event of B (tuples of ids)."""
        return any(a != b and (self.reach[b] >> a) & 1 for a in A for b in B)

    def concurrent(self, A, B):
        return (not self.before(A, B) and not self.before(B, A)
                and not set(A) & set(B))


def cls(proc="", kind="", text=""):
    return ("class", proc, kind, text)


def partner(first, second):
    return ("partner", first, second)


def pattern(spec):
    return ("pattern", spec)


def domain(model, d):
    if d[0] == "class":
        return [(e,) for e in model.events(*d[1:])]
    if d[0] == "partner":
        A = set(model.events(*d[1][1:]))
        B = set(model.events(*d[2][1:]))
        return sorted((a, b) for a in A for b in model.partners.get(a, ()) if b in B)
    return evaluate(model, d[1])


def evaluate(model, spec):
    """spec = (variables, formula): variables [(name, quant, domain)] in declaration
    order, formula(env, model) with env[name] = tuple of event ids.  Returns the
    matches, sorted (the canonical order), each the flattened $ values."""
    variables, formula = spec
    doms = {name: domain(model, d) for name, _, d in variables}
    R = [v for v in variables if v[1] == "$"]
    E = [v for v in variables if v[1] == "~"]
    A = [v for v in variables if v[1] == "*"]

    def distinct(vals):
        return len(set(vals)) == len(vals)

    out = []
    for rv in product(*[doms[v[0]] for v in R]):
        if not distinct(rv):
            continue
        found = False
        for ev in product(*[doms[v[0]] for v in E]):
            bound = list(rv) + list(ev)
            if not distinct(bound):
                continue
            env = {v[0]: x for v, x in zip(R + E, bound)}
            ok = True
            for av in product(*[doms[v[0]] for v in A]):
                if not distinct(bound + list(av)):
                    continue
                env.update({v[0]: x for v, x in zip(A, av)})
                if not formula(env, model):
                    ok = False
                    break
            if ok:
                found = True
                break
        if found:
            out.append(tuple(e for x in rv for e in x))
    return sorted(out)
