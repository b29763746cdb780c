"""Exact severity sums and group reductions: the linear-time counting path and
the sorting path of earlc.sums.sum_by_key agree and stay exact beyond float precision,
SeverityStore tables drop zero rows, first_of_groups picks the same rows with
and without its sort."""
import numpy as np
import pytest

from earlc import sums
from earlc.analysis.severity import SeverityStore
from earlc.sums import sum_by_key


def _by_sorting(keys, values):
    out = {}
    for k, v in zip(keys.tolist(), values.tolist()):
        out[k] = out.get(k, 0) + v
    ks = sorted(out)
    return np.array(ks, dtype=np.int64), np.array([out[k] for k in ks], dtype=np.int64)


def test_counting_path_equals_plain_sums():
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 500, 20000).astype(np.int64)
    values = rng.integers(-10 ** 9, 10 ** 9, 20000).astype(np.int64)
    assert sums._sum_by_counting(keys, values) is not None  # the fast path ran
    k, v = sum_by_key(keys, values)
    wk, wv = _by_sorting(keys, values)
    assert np.array_equal(k, wk) and np.array_equal(v, wv)
    assert v.dtype == np.int64


def test_large_values_fall_back_and_stay_exact():
    # sums beyond 2**53 would be rounded in float64: the sorting path takes them
    keys = np.array([3, 3, 1, 3], dtype=np.int64)
    values = np.array([2 ** 60 + 1, 2 ** 60 + 1, 5, 7], dtype=np.int64)
    assert sums._sum_by_counting(keys, values) is None
    k, v = sum_by_key(keys, values)
    assert k.tolist() == [1, 3]
    assert v.tolist() == [5, 2 ** 61 + 9]


def test_sparse_keys_use_sorting():
    keys = np.array([10 ** 12, 5, 10 ** 12], dtype=np.int64)
    values = np.array([1, 2, 3], dtype=np.int64)
    assert sums._sum_by_counting(keys, values) is None
    k, v = sum_by_key(keys, values)
    assert k.tolist() == [5, 10 ** 12] and v.tolist() == [2, 4]


def test_store_table_drops_zero_rows_and_unplaced():
    s = SeverityStore(n_locations=4)
    s.add("m", np.array([1, 1, 2, -1]), np.array([0, 0, 3, 1]), np.array([5, -5, 9, 100]))
    c, l, v = s.table("m")
    assert c.tolist() == [2] and l.tolist() == [3] and v.tolist() == [9]


@pytest.mark.parametrize("keys", [
    np.random.default_rng(5).integers(0, 300, 5000),          # counted
    np.random.default_rng(6).integers(0, 10 ** 12, 5000),     # sorted (sparse)
    np.empty(0, np.int64)])
def test_sums_and_counts_in_one_grouping(keys):
    keys = keys.astype(np.int64)
    values = np.random.default_rng(8).integers(-99, 99, len(keys)).astype(np.int64)
    k, v, n = sums.sum_and_count_by_key(keys, values)
    wk, wv = _by_sorting(keys, values)
    assert np.array_equal(k, wk) and np.array_equal(v, wv)
    assert np.array_equal(n, _by_sorting(keys, np.ones(len(keys), np.int64))[1])
    assert n.dtype == np.int64


def test_store_adds_severities_and_occurrences_together():
    cnode, loc = np.array([1, 1, 2, -1, 2]), np.array([0, 0, 3, 1, 3])
    sev = np.array([5, 7, 9, 100, 0])
    one, counts_one = SeverityStore(4), SeverityStore(4)
    one.add("m", cnode, loc, sev)
    counts_one.add("m", cnode, loc, np.ones(len(cnode), np.int64))
    both, counts_both = SeverityStore(4), SeverityStore(4)
    both.add_counted(counts_both, "m", cnode, loc, sev)
    for a, b in ((one, both), (counts_one, counts_both)):
        assert [x.tolist() for x in a.table("m")] == [x.tolist() for x in b.table("m")]
    assert counts_both.table("m")[2].tolist() == [2, 2]


def test_first_of_groups_fast_path_equals_sorting():
    from earlc.analysis.reductions import first_of_groups
    rng = np.random.default_rng(3)
    for trial in range(20):
        keys = np.sort(rng.integers(0, 50, 300))
        vals = rng.integers(0, 5, 300)  # many ties
        got = first_of_groups(keys, vals)  # grouped rows: no sort
        # per key: the largest value, ties to the first row
        ref = [min(np.nonzero((keys == k) & (vals == vals[keys == k].max()))[0])
               for k in np.unique(keys)]
        assert got.tolist() == ref
        # the same rows shuffled take the sorting path and choose the same (key, value)s
        perm = rng.permutation(300)
        want = perm[first_of_groups(keys[perm], vals[perm])]
        assert sorted(zip(keys[want].tolist(), vals[want].tolist())) == \
            list(zip(keys[got].tolist(), vals[got].tolist()))


def test_largest_equals_stable_sort():
    from earlc.analysis.engine import largest
    rng = np.random.default_rng(11)
    for n, k in ((0, 5), (3, 5), (50, 5), (1000, 10), (1000, 1)):
        v = rng.integers(0, 20, n).astype(np.int64)  # many ties
        assert largest(v, k).tolist() == np.argsort(-v, kind="stable")[:k].tolist()


def test_messages_out_of_order_against_their_definition(tmp_path):
    """Messages in Wrong Order's test (in C): a message is out of order when an
    earlier-sent message of the same sender and receiver location is received by a
    later call; the rows as p2p_messages gives them and shuffled."""
    import earlc
    from earlc.analysis.context import AnalysisContext
    from earlc.synth import synth

    synth("master-worker", tmp_path / "mw", ranks=4, iterations=30, any_source=True)
    synth("ping-pong", tmp_path / "pp", ranks=2, iterations=20, wrong_order=True)
    rng = np.random.default_rng(5)
    found = 0
    for name in ("mw", "pp"):
        ctx = AnalysisContext(earlc.open(tmp_path / name), threads=3)
        m = ctx.matched_messages()
        loc = ctx.events.location
        pair = loc[m["send"]].astype(np.int64) * (1 << 32) + loc[m["recv"]]
        want = np.array([bool(np.any((pair == pair[k]) & (m["send"] < m["send"][k])
                                     & (m["recv_call"] > m["recv_call"][k])))
                         for k in range(len(pair))])
        found += int(want.sum())
        got = ctx.received_out_of_order(m["recv"], m["recv_call"], m["send"])
        assert got.tolist() == want.tolist()
        order = rng.permutation(len(pair))
        got = ctx.received_out_of_order(m["recv"][order], m["recv_call"][order],
                                        m["send"][order])
        assert got.tolist() == want[order].tolist()
    assert found  # the traces have messages out of order


def test_selected_columns_are_gathered_lazily_and_settable():
    from earlc.analysis import Instances
    base = Instances(np.arange(6), np.arange(6) * 10, {"a": np.arange(6) + 100,
                                                        "b": np.arange(6) + 200})
    sel = base.select(np.array([True, False, True, False, True, True])).select([1, 3])
    assert sel.where.tolist() == [2, 5] and sel.severity.tolist() == [20, 50]
    assert sel["a"].tolist() == [102, 105] and sel["b"].tolist() == [202, 205]
    sel.columns["c"] = np.array([7, 8])  # a plugin adds its own column
    assert dict(sel.columns)["c"].tolist() == [7, 8] and len(sel.columns) == 3
    with pytest.raises(ValueError):
        sel.columns["d"] = np.arange(3)
    again = Instances(sel.where, sel.severity, sel.columns)
    assert again["a"].tolist() == [102, 105]
