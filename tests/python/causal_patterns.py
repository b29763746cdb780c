"""The patterns the tests of the search in parts search (test_parts_causal.py
and its mpiexec driver parts_causal_driver.py)."""

#: patterns of docs/patterns.md's kinds: pairs, universal, partner classes (whose
#: second event may be another part's), limited precedence, a sub-pattern as a
#: type, an existential, a class without events
PATTERNS = {
    "pairs": 'S := ["", "MPI_*SEND", ""]; S $a, $b; P := $a || $b;',
    "last": 'Send := ["", "MPI_*SEND", ""]; Send $s, *all; Last := $s !--> *all;',
    "partner": 'M := ["", "MPI_*SEND", ""].["", "MPI_*RECV", ""]; E := ["", "ENTER", "MPI_*"];'
               ' M $m; E $e; P := $m --> $e & $e --> $m;',
    "limited": 'S := ["", "MPI_*SEND", ""]; R := ["", "MPI_*RECV", ""]; S $s; R $r;'
               ' L := $s -(S)-> $r;',
    "sub": 'S := ["", "MPI_*SEND", ""]; R := ["", "MPI_*RECV", ""]; S $s, *o; R $r;'
           ' L := $s --> $r & (*o !--> $r | $s !--> *o); L $l, $m; P := $l || $m;',
    "exist": 'S := ["", "MPI_*SEND", ""]; R := ["", "MPI_*RECV", ""]; E := ["rank 1", "ENTER", ""];'
             ' S $a; R $r; E ~e; P := $a --> $r & ~e || $r & $a --> ~e;',
    "threads": 'A := ["", "THREAD_ACQUIRE_LOCK", ""]; B := ["", "*_BEGIN", ""]; A $a; B $b;'
               ' P := $a || $b;',
    "none": 'S := ["rank 99", "MPI_SEND", ""]; S $a; P := $a;',
}

#: the ones searched under mpiexec (each search is a few dozen collectives, and
#: a collective between oversubscribed processes costs a turn of the scheduler)
MPI_PATTERNS = ["last", "partner", "sub"]
