"""earlc's version, for the package (`earlc.__version__`) and for what it writes
(the creator of its reports and exports)."""

__version__ = "0.1.0"
