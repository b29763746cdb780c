"""The one table of MPI calls (earlc.mpi_calls): valid OTF2 names, the writer's
roles and the analysis's classes read from it, and the deliberate differences
between the two written down."""
from types import SimpleNamespace

import pytest

from earlc import mpi_calls, otf2names
from earlc.analysis import regions
from earlc.writer import collective_op, region_kind


def test_every_entry_names_valid_otf2_roles_operations_and_classes():
    for name, call in mpi_calls._CALLS.items():
        assert call.role in otf2names.REGION_ROLES.values(), name
        assert call.cls in regions.CLASSES, name
        assert call.op is None or call.op in otf2names.COLLECTIVE_OPS.values(), name


@pytest.mark.parametrize("name, role, cls", [
    ("MPI_Send", "POINT2POINT", "mpi_p2p"),
    ("MPI_Waitall", "POINT2POINT", "mpi_p2p"),
    ("MPI_SEND", "POINT2POINT", "mpi_p2p"),          # the call name in any case
    ("MPI_Allreduce", "COLL_ALL2ALL", "mpi_collective"),
    ("MPI_Barrier", "BARRIER", "mpi_barrier"),
    ("MPI_Ibarrier", "BARRIER", "mpi_barrier"),
    ("MPI_Iallreduce", "COLL_ALL2ALL", "mpi_other"),  # recorded as a collective, not its time
    ("MPI_Send_init", "POINT2POINT", "mpi_other"),   # set-up, no transfer
    ("MPI_Cancel", "POINT2POINT", "mpi_other"),
    ("MPI_Init", "FUNCTION", "mpi_init_finalize"),
    ("MPI_Put", "RMA", "mpi_other"),
    ("MPI_Win_fence", "RMA", "mpi_other"),
    ("MPI_Comm_rank", "FUNCTION", "mpi_other"),
])
def test_writer_role_and_analysis_class(name, role, cls):
    assert region_kind(name) == ("MPI", role)
    assert regions.classify(SimpleNamespace(name=name, paradigm="MPI", role=role)) == cls


def test_not_mpi_and_collective_operations():
    assert mpi_calls.lookup("main") is None
    assert region_kind("main") == ("USER", "FUNCTION")
    assert collective_op("MPI_Iallreduce") == collective_op("MPI_Allreduce")
    assert collective_op("reduce_scatter_block") == collective_op("MPI_Reduce_scatter_block")
    with pytest.raises(ValueError):
        collective_op("MPI_Send")
