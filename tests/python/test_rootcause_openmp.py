"""Long-term delay costs across OpenMP barriers, on a generated hybrid program.

A worker thread of rank 1 is slow in every parallel loop: its master waits for it
at the loop's implicit barrier and so comes late to the MPI collectives after the
loop, where rank 0 waits.  The long-term costs of those MPI waits (and of rank 0's
worker threads idling while their master waits) must reach the slow worker through
its master's barrier wait, and no other worker thread.
"""
import pytest

import earlc

SLOW = (1, 2)  # (rank, thread) of the delayed worker


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth") / "collectives"
    earlc.synth("collectives", out, ranks=2, threads=4, iterations=3, seed=1, delay=5000,
                delay_rank=SLOW[0], delay_thread=SLOW[1])
    trace = earlc.open(out)
    return earlc.analyze(trace, properties=["all"])


def per_thread(report, metric):
    """{(rank, thread): value} of the locations with a non-zero value."""
    locs = report.trace.locations
    return {(locs[l].rank, locs[l].thread): v for l, v in report.by_location(metric) if v}


@pytest.mark.parametrize("metric", ["delay_barrier_longterm", "delay_n2n_longterm",
                                    "delay_ompidle_longterm"])
def test_collective_and_idleness_costs_reach_the_slow_worker_only(report, metric):
    got = per_thread(report, metric)
    workers = {k: v for k, v in got.items() if k[1] > 0}
    assert list(workers) == [SLOW], (metric, got)
    assert workers[SLOW] > 0


def test_omp_barrier_costs_stop_at_the_barrier(report):
    # no MPI wait inside a parallel region: the barrier waits have nothing to pass on
    assert per_thread(report, "delay_ompbarrier_longterm") == {}
    assert SLOW in per_thread(report, "delay_ompbarrier")
