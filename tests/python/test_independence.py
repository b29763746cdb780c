"""A metric's value never depends on what else was asked for: every built-in
metric analysed alone (`earlc.analyze(trace, properties=[name])`, which
evaluates it with what it declares) equals the whole analysis
(`properties="all"`) in every (call path, location) cell, on a small trace of
every generated kind and on every real trace of the suite.  A property that
read what it does not declare would differ here (Late Receiver read Late
Sender's occurrences without declaring them: 1,396 ticks alone, 0 in the
whole analysis of traces/hybrid), or be switched off for the undeclared read."""
import pytest

import earlc
from earlc.analysis.catalog import BUILTIN
from earlc.synth import KINDS, synth
from conftest import REFERENCE_NAMES, ROOT, SHARED_TRACES

#: small traces of every generated kind (a few thousand events each)
GENERATED = {
    "ping-pong": dict(ranks=2, iterations=20, wrong_order=True),
    "ring": dict(ranks=4, iterations=10, eager_limit=0),
    "halo": dict(ranks=6, iterations=8, delay=3000, delay_rank=2, delay_every=3),
    "master-worker": dict(ranks=4, iterations=12, any_source=True),
    "collectives": dict(ranks=5, iterations=6, split=2),
    "omp": dict(threads=4, iterations=6, lock_rounds=2),
    "hybrid": dict(ranks=3, threads=3, iterations=5),
}
REPOSITORY = sorted(p.name for p in (ROOT / "traces").iterdir()
                    if (p / "traces.otf2").exists())
REAL = REFERENCE_NAMES + ["generated-3r-longterm", "generated-4r-longterm"]


def test_every_generated_kind_is_covered():
    assert sorted(GENERATED) == sorted(KINDS)


def cells(report, name):
    c, l, v = report._store.table(name)
    paths = report.callpaths
    return {(paths[int(a)], int(b)): int(x) for a, b, x in zip(c, l, v) if x}


def check_alone_equals_whole(trace):
    whole = earlc.analyze(trace, properties="all")  # shared by every metric of the trace
    assert not whole.switched_off, [str(s) for s in whole.switched_off]
    builtins = [p.name for p in whole.properties if p.source == BUILTIN]
    assert len(builtins) > 60
    differ = {}
    for name in builtins:
        alone = earlc.analyze(trace, properties=[name])
        assert not alone.switched_off, (name, [str(s) for s in alone.switched_off])
        a, b = cells(alone, name), cells(whole, name)
        if a != b:
            differ[name] = (sum(a.values()), sum(b.values()))
    assert not differ, differ  # metric: (alone, whole)


@pytest.mark.parametrize("kind", sorted(GENERATED))
def test_generated(kind, tmp_path):
    synth(kind, tmp_path / kind, **GENERATED[kind])
    check_alone_equals_whole(earlc.open(tmp_path / kind))


@pytest.mark.parametrize("name", REPOSITORY)
def test_repository_traces(name):
    check_alone_equals_whole(earlc.open(ROOT / "traces" / name))


@pytest.mark.parametrize("name", REAL)
def test_real_traces(name):
    path = SHARED_TRACES / name / "traces.otf2"
    if not path.exists():
        pytest.skip("reference trace %s is absent" % name)
    check_alone_equals_whole(earlc.open(path))
