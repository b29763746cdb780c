"""On generated traces, every severity of the catalog equals the generator's
expected.json exactly, in ticks: per property, per call path, per location, per
(call path, location), with the number of occurrences.  The generator derives
those values from its simulated schedule, never from the written trace."""
import json

import pytest

import earlc

SCENARIOS = {
    "ping-pong": dict(ranks=2, iterations=4),
    "ping-pong-late-receiver": dict(kind="ping-pong", ranks=2, iterations=3, bytes=1 << 20,
                                    eager_limit=65536),
    "ping-pong-wrong-order": dict(kind="ping-pong", ranks=2, iterations=3, wrong_order=1),
    "ring": dict(ranks=5, iterations=3),
    "ring-delayed": dict(kind="ring", ranks=4, iterations=4, delay=700, delay_rank=2),
    "ring-synchronous": dict(kind="ring", ranks=3, iterations=3, bytes=200000, eager_limit=1024),
    "halo": dict(ranks=6, iterations=3),
    "master-worker": dict(ranks=4, iterations=5),
    "master-worker-in-order": dict(kind="master-worker", ranks=4, iterations=5, any_source=0),
    "collectives": dict(ranks=5, iterations=2),
    "collectives-split": dict(kind="collectives", ranks=6, iterations=2, split=3, root=1),
    "omp": dict(ranks=1, threads=4, iterations=3),
    "hybrid": dict(ranks=3, threads=3, iterations=2),
}


#: plain metrics: values without occurrences (visits count themselves)
PLAIN = ("time", "visits")


@pytest.fixture(scope="module", params=sorted(SCENARIOS))
def analysed(request, tmp_path_factory):
    opts = dict(SCENARIOS[request.param])
    kind = opts.pop("kind", request.param)
    out = tmp_path_factory.mktemp("synth") / request.param
    earlc.synth(kind, out, **opts)
    expected = json.loads((out / "expected.json").read_text())
    trace = earlc.open(out)
    return expected, trace, earlc.analyze(trace)


def test_totals_equal_expected(analysed):
    expected, trace, report = analysed
    assert expected["schema"] == "earlc-expected/1"
    for name, exp in expected["properties"].items():
        assert report.total(name) == exp["total"], name
        if name not in PLAIN:
            assert report.occurrences(name) == exp["instances"], name


def test_every_call_path_and_location_equals_expected(analysed):
    expected, trace, report = analysed
    df = report.to_dataframe()
    for name, exp in expected["properties"].items():
        got = {(r.callpath, int(r.location)): (int(r.value), int(r.occurrences))
               for r in df[df.metric == name].itertuples()}
        want = {(e["callpath"], e["location"]): (e.get("severity", e.get("ticks")),
                                                 e.get("instances", 0))
                for e in exp["entries"] if e.get("severity", e.get("ticks"))}
        if name in PLAIN:
            got = {k: (v, 0) for k, (v, _) in got.items()}
            want = {k: (v, 0) for k, (v, _) in want.items()}
        assert got == want, name
        by_loc = dict(report.by_location(name))
        assert [by_loc.get(l, 0) for l in range(len(exp["by_location"]))] == exp["by_location"]
        assert {cp: v for cp, v in report.by_callpath(name)} == \
            {cp: v for cp, v in exp["by_callpath"].items() if v}


def test_event_counts_equal_expected(analysed):
    expected, trace, report = analysed
    assert len(trace) == expected["events"]["total"]
    assert trace.kind_counts() == expected["events"]["by_kind"]
    assert not trace.warnings and not trace.states.warnings


def random_configuration(rng):
    kind = rng.choice(["ping-pong", "ring", "halo", "master-worker", "collectives", "omp",
                       "hybrid"])
    ranks = 1 if kind == "omp" else rng.randint(2, 7)
    opts = dict(ranks=ranks, iterations=rng.randint(1, 3), seed=rng.randint(1, 10 ** 6),
                imbalance=rng.choice([0, 20, 80]), compute=rng.choice([200, 1000]),
                latency=rng.choice([1, 10, 100]))
    if kind in ("omp", "hybrid"):
        opts.update(threads=rng.randint(2, 4), hold=rng.choice([10, 50]),
                    lock_rounds=rng.randint(1, 3))
    if kind == "collectives":
        opts.update(split=rng.randint(1, ranks), root=rng.randrange(ranks))
    if kind in ("ping-pong", "ring", "halo") and rng.random() < 0.5:
        opts.update(bytes=200000, eager_limit=1024)  # synchronous sends: late receivers
    if kind == "ping-pong" and "eager_limit" not in opts and rng.random() < 0.5:
        opts.update(wrong_order=1)
    if kind == "master-worker":
        opts.update(any_source=rng.randint(0, 1))
    if rng.random() < 0.5:
        opts.update(delay=rng.choice([100, 2000]), delay_rank=rng.randrange(ranks))
    return kind, opts


@pytest.mark.parametrize("seed", range(16))
def test_random_configurations_agree_with_the_generator(tmp_path, seed):
    import random

    kind, opts = random_configuration(random.Random(seed))
    out = tmp_path / "t"
    earlc.synth(kind, out, **opts)
    expected = json.loads((out / "expected.json").read_text())
    report = earlc.analyze(earlc.open(out))
    df = report.to_dataframe()
    for name, exp in expected["properties"].items():
        got = {(r.callpath, int(r.location)): int(r.value)
               for r in df[df.metric == name].itertuples()}
        want = {(e["callpath"], e["location"]): e["severity"] for e in exp["entries"]
                if e["severity"]}
        assert got == want, (kind, opts, name)


@pytest.mark.parametrize("folder", ["ring-late-sender", "pingpong-wrong-order", "collectives",
                                    "omp-locks", "hybrid"])
def test_bundled_examples_agree_with_their_expected_json(folder):
    from conftest import ROOT

    path = ROOT / "traces" / folder
    expected = json.loads((path / "expected.json").read_text())
    report = earlc.analyze(earlc.open(path))
    for name, exp in expected["properties"].items():
        assert report.total(name) == exp["total"], (folder, name)
        assert {cp: v for cp, v in report.by_callpath(name)} == \
            {cp: v for cp, v in exp["by_callpath"].items() if v}, (folder, name)
