"""Every user error of the command line is one line on standard error and exit
status 2, never a traceback, and is found before any long work starts.

The bad values are derived from the parser itself (earlc.cli.build_parser), so a
new subcommand or option is driven through a subprocess here without a change
to this file: every option with a missing value, with values its type refuses,
every positional trace that does not exist, every subcommand's --help and -h."""
import argparse
import os
import subprocess
import sys

import pytest

from conftest import ROOT

from earlc import cliargs
from earlc.cli import build_parser

DEMO = str(ROOT / "traces" / "demo-ring")
MISSING = "/nonexistent-earlc-folder/trace"

#: bad values per argument type; each must be refused by the parser
BAD_VALUES = {
    "count": ["-1", "x"],
    "output_file": ["/nonexistent-earlc-folder/out.txt", "/"],
    "output_folder": ["/nonexistent-earlc-folder/out", "/etc/passwd"],
    "existing_file": ["/nonexistent-earlc-plugin.py"],
    "name_list": [","],
    "int": ["x"],
    "float": ["x"],
}


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "earlc", *args], capture_output=True, text=True,
                          cwd=ROOT / "python", timeout=300, env=env)


def assert_one_line_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and r.stderr.endswith("\n"), r.stderr
    assert "Traceback" not in r.stderr and "error" in r.stderr
    assert r.stdout == ""
    for n in needles:
        assert n in r.stderr, (n, r.stderr)


def subcommands():
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices


def type_name(action):
    t = action.type
    return getattr(t, "__name__", None) if t is not None else None


def placeholder_output(action):
    """A file the option may write, with the ending its help asks for."""
    text = action.help or ""
    ending = next((e for e in (".html", ".png", ".cubex", ".json") if e in text), ".txt")
    return os.path.join(PLACEHOLDER_FOLDER, "out" + ending)


PLACEHOLDER_FOLDER = "/tmp"


def placeholder_args(sub):
    """Valid values for the positionals and required options of a subcommand, so
    that errors come from the option under test."""
    out = []
    for a in sub._actions:
        if a.option_strings and a.required:
            value = placeholder_output(a) if type_name(a) == "output_file" else \
                (sorted(a.choices)[0] if a.choices else "x")
            out += [a.option_strings[-1], value]
            continue
        if a.option_strings or a.nargs == argparse.REMAINDER:
            continue
        if a.dest == "trace":
            out.append(DEMO)
        elif a.choices:
            out.append(sorted(a.choices)[0])
        else:
            out.append("x")
    return out


def option_cases(cmd):
    """(argv) of every bad use of every option of subcommand cmd."""
    sub = subcommands()[cmd]
    base = placeholder_args(sub)
    for a in sub._actions:
        if not a.option_strings or isinstance(a, argparse._HelpAction):
            continue
        flag = a.option_strings[-1]
        if a.nargs == 0:  # a switch: given a value
            yield base + ["%s=1" % flag]
            continue
        yield base + [flag]  # no value
        bad = list(BAD_VALUES.get(type_name(a), []))
        if a.choices is not None:
            bad.append("no-such-choice")
        for v in bad:
            yield base + [flag, v]


@pytest.mark.parametrize("cmd", sorted(subcommands()))
def test_every_option_refuses_bad_values_on_one_line(cmd):
    # the cases of one subcommand run a few at a time: each is a Python start-up
    from concurrent.futures import ThreadPoolExecutor

    cases = list(option_cases(cmd))
    assert cases or cmd == "properties"
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda args: (args, run(cmd, *args)), cases))
    bad = []
    for args, r in results:
        try:
            assert_one_line_error(r, "earlc %s: error:" % cmd)
        except AssertionError as exc:
            bad.append((args, str(exc)[:300]))
    assert not bad, bad


@pytest.mark.parametrize("cmd", sorted(subcommands()))
def test_every_subcommand_refuses_unknown_options_and_missing_arguments(cmd):
    sub = subcommands()[cmd]
    # a subcommand that passes the rest of its line on (a command to run) takes
    # any word there as its own
    if not any(a.nargs == argparse.REMAINDER for a in sub._actions):
        assert_one_line_error(run(cmd, *placeholder_args(sub), "--no-such-option"))
    required = [a for a in sub._actions if a.nargs != argparse.REMAINDER and (
        a.required or (not a.option_strings and a.nargs not in ("?", "*")))]
    if required:
        assert_one_line_error(run(cmd), "earlc %s: error:" % cmd)


@pytest.mark.parametrize("cmd", sorted(subcommands()))
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_subcommand_has_help(cmd, flag):
    r = run(cmd, flag)
    assert r.returncode == 0 and "usage:" in r.stdout and r.stderr == "", r.stderr


def test_help_of_a_synth_kind():
    r = run("synth", "ring", "--help")
    assert r.returncode == 0 and "--imbalance" in r.stdout


@pytest.mark.parametrize("cmd", [c for c, s in sorted(subcommands().items())
                                 if any(a.dest == "trace" for a in s._actions)])
def test_a_trace_that_does_not_exist(cmd):
    args = [MISSING if a == DEMO else a for a in placeholder_args(subcommands()[cmd])]
    r = run(cmd, *args)
    assert_one_line_error(r)
    # the trace is named, unless another argument (a placeholder "x" that is no
    # pattern, say) was checked and refused before the trace was read
    assert (MISSING in r.stderr and "No such file" in r.stderr) or " x " in r.stderr, r.stderr


def test_no_command_and_an_unknown_command():
    assert_one_line_error(run(), "name a command")
    assert_one_line_error(run("no-such-command"), "invalid choice")


def test_user_errors_come_before_reading_the_trace():
    # the trace does not exist: the error that shows is the one checked first
    assert_one_line_error(run("analyze", MISSING, "-o", "/nonexistent-earlc-folder/r.txt"),
                          "does not exist")
    assert_one_line_error(run("analyze", MISSING, "--properties", "no_such_property"),
                          "unknown property no_such_property")
    assert_one_line_error(run("analyze", MISSING, "--plugin", "/nonexistent-earlc-plugin.py"),
                          "no such file")


def test_properties_that_are_no_metric_and_unknown_names():
    r = run("analyze", DEMO, "--properties", "p2p_messages")
    assert_one_line_error(r, "p2p_messages is a compound event", "late_sender")
    r = run("analyze", DEMO, "--properties", "late_sendr,wiat_at_barrier")
    assert_one_line_error(r, "unknown properties late_sendr, wiat_at_barrier: did you mean "
                             "late_sender for late_sendr, wait_at_barrier for wiat_at_barrier?")
    assert_one_line_error(run("analyze", DEMO, "--properties", "root_cuase"),
                          "unknown property root_cuase: did you mean root_cause?")
    r = run("analyze", DEMO, "--properties", "bogus")
    assert_one_line_error(r, "unknown property bogus (known: ")
    known = r.stderr.split("known: ")[1]
    assert "p2p_messages" not in known and "mpi_collectives" not in known
    assert "late_sender" in known


def test_a_property_alone_still_has_the_total_time():
    r = run("analyze", DEMO, "--properties", "visits")
    assert r.returncode == 0, r.stderr
    assert "total time 0.000" not in r.stdout and "Visits" in r.stdout


def test_output_into_a_folder_or_an_unwritable_place(tmp_path):
    assert_one_line_error(run("analyze", DEMO, "-o", str(tmp_path)), "is a folder")
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        assert_one_line_error(run("info", DEMO, "-o", str(ro / "x.txt")), "permission denied")


def test_synth_values_the_generator_refuses(tmp_path):
    assert_one_line_error(run("synth", "ring", "-o", str(tmp_path / "a"), "--ranks", "0"),
                          "ranks")
    assert_one_line_error(run("synth", "ring", "-o", str(tmp_path / "b"), "--ranks", "-3"),
                          "ranks")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "traces.otf2").write_text("x")
    assert_one_line_error(run("synth", "ring", "-o", str(tmp_path / "c")))


def test_trace_error_is_the_message():
    import earlc

    with pytest.raises(earlc.TraceError) as info:
        earlc.open(MISSING)
    assert str(info.value) == "%s: No such file or directory" % MISSING
    assert info.value.status == "not found" and isinstance(info.value.code, int)


def test_an_internal_error_is_one_line_too(tmp_path):
    plugin = tmp_path / "boom.py"
    # a plugin whose report rendering breaks is not a user error of the command
    # line; it still ends in one line, with how to see the traceback
    plugin.write_text("from earlc.analysis import Property\n"
                      "class Boom(Property):\n"
                      "    name = 'boom'\n"
                      "    def totals(self, ctx):\n"
                      "        return None\n"
                      "    def detect(self, ctx, s):\n"
                      "        return None\n"
                      "    @property\n"
                      "    def title(self):\n"
                      "        raise RuntimeError('no title')\n")
    r = run("properties", "--plugin", str(plugin))
    assert r.returncode in (1, 2) and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.stderr


def test_one_line_helper():
    assert cliargs.one_line("a\n  b\tc ") == "a b c"


@pytest.mark.parametrize("cmd", ["analyze", "properties"])
def test_a_plugin_that_cannot_be_loaded(tmp_path, cmd):
    bad = tmp_path / "bad.py"
    bad.write_text("from earlc.analysis import Property\nclass X(Property):\n    name = 'x'\n"
                   "    def detect(self, ctx, s)\n        return None\n")
    args = [MISSING] if cmd == "analyze" else []
    assert_one_line_error(run(cmd, *args, "--plugin", str(bad)), str(bad), "line 4",
                          "syntax error")
    taken = tmp_path / "taken.py"
    taken.write_text("from earlc.analysis import Property\nclass X(Property):\n"
                     "    name = 'late_sender'\n    def detect(self, ctx, s):\n        return None\n")
    assert_one_line_error(run(cmd, *args, "--plugin", str(taken)), "taken by the built-in",
                          "replaces")


@pytest.mark.parametrize("cmd", [["plot", "timeline"], ["export"]])
@pytest.mark.parametrize("window,needle", [
    (["--from", "1e300"], "outside the trace"),
    (["--to", "1e20"], "outside the trace"),
    (["--to", "1e300"], "outside the trace"),
    (["--from", "1"], "spans 0 to"),
    (["--from", "5ms", "--to", "5ms"], "empty window"),
    (["--from", "2us", "--to", "1us"], "before"),
])
def test_a_window_outside_the_trace_or_empty(tmp_path, cmd, window, needle):
    out = str(tmp_path / ("t.png" if cmd[0] == "plot" else "t.json"))
    assert_one_line_error(run(*cmd, DEMO, "-o", out, *window), needle)
    assert not os.path.exists(out)


def test_a_window_in_python_is_checked_too():
    import earlc
    from earlc.timeline import window_ticks

    trace = earlc.open(DEMO)
    t0, span = trace.start_time, trace.duration_ticks
    assert window_ticks(trace) == (t0, t0 + span)
    assert window_ticks(trace, 0, trace.duration) == (t0, t0 + span)
    assert window_ticks(trace, 1e-6, 1e-6) == (t0 + 1000, t0 + 1000)  # an instant
    for start, end in ((1e300, None), (None, 1e20), (-1.0, None), (float("nan"), None),
                       (2e-6, 1e-6)):
        with pytest.raises(ValueError):
            window_ticks(trace, start, end)


def _output_commands():
    """(subcommand, its -o action) of every subcommand that writes with -o."""
    for cmd, sub in sorted(subcommands().items()):
        for a in sub._actions:
            if "-o" in a.option_strings:
                yield cmd, sub, a


@pytest.mark.parametrize("cmd", [c for c, _, _ in _output_commands()])
def test_output_into_a_missing_folder_is_the_same_error_everywhere(cmd):
    """Files and archive folders alike: the folder that is to hold them must exist."""
    sub, action = next((s, a) for c, s, a in _output_commands() if c == cmd)
    assert type_name(action) in ("output_file", "output_folder"), (cmd, type_name(action))
    args = [a for a in placeholder_args(sub)]
    if "-o" in args or "--output" in args:  # a required -o: the placeholder is replaced
        k = args.index("--output") if "--output" in args else args.index("-o")
        del args[k:k + 2]
    ending = os.path.splitext(placeholder_output(action))[1] \
        if type_name(action) == "output_file" else ""
    r = run(cmd, *args, "-o", "/nonexistent-earlc-folder/out" + ending)
    assert_one_line_error(r, "earlc %s: error: argument -o/--output: folder "
                             "/nonexistent-earlc-folder does not exist; create it first" % cmd)


def test_version():
    import earlc

    r = run("--version")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.startswith("earlc %s (libotf2 " % earlc.__version__) and r.stdout.count("\n") == 1


def test_analyze_help_says_the_root_causes_are_opt_in():
    """Without --properties the root causes are left out: the help says so and
    does not claim the default is "all"."""
    text = " ".join(run("analyze", "--help").stdout.split())
    assert "default: all" not in text
    assert "every property but the root causes" in text and "'all'" in text
