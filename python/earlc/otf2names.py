"""Names of OTF2's enumerations, for display: region roles, paradigms, location
and group types, collective operations.  Values are those of libotf2 3.x
(OTF2_GeneralDefinitions.h, OTF2_Definitions.h, OTF2_Events.h)."""


def _table(names):
    return {i: n for i, n in enumerate(names)}


PARADIGMS = _table([
    "UNKNOWN", "USER", "COMPILER", "OPENMP", "MPI", "CUDA", "MEASUREMENT_SYSTEM",
    "PTHREAD", "HMPP", "OMPSS", "HARDWARE", "GASPI", "UPC", "SHMEM", "WINTHREAD",
    "QTTHREAD", "ACETHREAD", "TBBTHREAD", "OPENACC", "OPENCL", "MTAPI", "SAMPLING",
    "NONE", "HIP", "KOKKOS",
])

REGION_ROLES = _table([
    "UNKNOWN", "FUNCTION", "WRAPPER", "LOOP", "CODE", "PARALLEL", "SECTIONS", "SECTION",
    "WORKSHARE", "SINGLE", "SINGLE_SBLOCK", "MASTER", "CRITICAL", "CRITICAL_SBLOCK",
    "ATOMIC", "BARRIER", "IMPLICIT_BARRIER", "FLUSH", "ORDERED", "ORDERED_SBLOCK", "TASK",
    "TASK_CREATE", "TASK_WAIT", "COLL_ONE2ALL", "COLL_ALL2ONE", "COLL_ALL2ALL",
    "COLL_OTHER", "FILE_IO", "POINT2POINT", "RMA", "DATA_TRANSFER", "ARTIFICIAL",
    "THREAD_CREATE", "THREAD_WAIT", "TASK_UNTIED", "ALLOCATE", "DEALLOCATE", "REALLOCATE",
    "FILE_IO_METADATA",
])

COLLECTIVE_OPS = _table([
    "BARRIER", "BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV", "ALLGATHER",
    "ALLGATHERV", "ALLTOALL", "ALLTOALLV", "ALLTOALLW", "ALLREDUCE", "REDUCE",
    "REDUCE_SCATTER", "SCAN", "EXSCAN", "REDUCE_SCATTER_BLOCK", "CREATE_HANDLE",
    "DESTROY_HANDLE", "ALLOCATE", "DEALLOCATE", "CREATE_HANDLE_AND_ALLOCATE",
    "DESTROY_HANDLE_AND_DEALLOCATE",
])

LOCATION_TYPES = _table(["UNKNOWN", "CPU_THREAD", "ACCELERATOR_STREAM", "METRIC"])

LOCATION_GROUP_TYPES = _table(["UNKNOWN", "PROCESS", "ACCELERATOR"])

GROUP_TYPES = _table(["UNKNOWN", "LOCATIONS", "REGIONS", "METRIC", "COMM_LOCATIONS",
                      "COMM_GROUP", "COMM_SELF"])

#: OTF2_Type codes of metric values
TYPE_UINT64, TYPE_INT64, TYPE_DOUBLE = 4, 8, 10  # OTF2_TYPE_UINT64 / INT64 / DOUBLE

UNDEFINED_UINT32 = 0xFFFFFFFF


def name(table, value):
    """The name of value in table, or the number itself as text."""
    return table.get(value, str(value))
