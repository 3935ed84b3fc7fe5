"""Python-defined ops: validated against their reference, timed by tunekit, stored, served."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tunekit
import scale_op

N = 512


@pytest.fixture(autouse=True)
def fresh_counts():
    scale_op.calls.clear()


def test_the_wrong_but_fast_candidate_loses_to_the_correct_one():
    tuner = tunekit.Tuner()
    report = scale_op.make_op(tuner).tune(n=N)
    assert report.source == "searched"
    assert report.winner == "vectorised"
    wrong = report.candidate("wrong_fast")
    assert wrong.status == "validation_failed"
    assert "outside tolerance" in wrong.message
    winner = report.candidate("vectorised")
    assert winner.ok and winner.winner and winner.samples >= 16 and winner.median > 0
    # Timed by the tuner's instrument: the default was measured too, and is slower.
    assert report.candidate("elementwise").ok
    assert report.speedup > 1


def test_a_candidate_that_raises_is_classified_and_the_search_goes_on():
    report = scale_op.make_op(tunekit.Tuner()).tune(n=N)
    raised = report.candidate("raises")
    assert raised.status == "launch_failed"
    assert "ValueError: no luck today" in raised.message
    assert report.winner == "vectorised"


def test_the_report_dict_is_the_json_reporters():
    report = scale_op.make_op(tunekit.Tuner()).tune(n=N)
    d = report.to_dict()
    assert d["format"] == "tunekit.report" and d["winner"] == report.winner
    assert [c["name"] for c in d["candidates"]] == [c.name for c in report.candidates]
    assert d["candidates"][0]["timing"]["samples"]  # every reading with its samples
    d["winner"] = "changed"
    assert report.to_dict()["winner"] == "vectorised"  # a copy


def test_a_call_dispatches_through_the_table():
    tuner = tunekit.Tuner()
    op = scale_op.make_op(tuner)
    x = np.arange(N, dtype=np.float32)
    y = op(x)  # the first call for this key searches
    np.testing.assert_allclose(y, 2 * x + 1)
    decision = tuner.decision(op, n=N)
    assert decision.candidate == "vectorised" and decision.source == "memory_hit"
    scale_op.calls.clear()
    for _ in range(3):
        op(x)
    assert scale_op.calls == {"vectorised": 3}  # served from the table: no search, no check


def test_the_choice_is_stored_beside_cpp_choices():
    scale_op.make_op(tunekit.Tuner()).tune(n=N)
    stored = tunekit.cache.ls(op="test_scale")
    assert [(s["key"], s["winner"]) for s in stored] == [("n=512", "vectorised")]


def test_a_second_process_serves_the_stored_choice_without_searching(cache_dir):
    assert scale_op.make_op(tunekit.Tuner()).tune(n=N).winner == "vectorised"
    script = textwrap.dedent(f"""
        import numpy as np, tunekit, scale_op
        tuner = tunekit.Tuner()
        op = scale_op.make_op(tuner)
        report = op.tune(n={N})
        y = op(np.ones({N}, dtype=np.float32))
        print(report.source, report.winner, dict(scale_op.calls), float(y[0]))
    """)
    env = dict(os.environ, TUNEKIT_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.path.dirname(scale_op.__file__))
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         check=True).stdout.split(maxsplit=2)
    source, winner, rest = out
    assert (source, winner) == ("cache_replay", "vectorised")
    # Only the stored winner ran there (its one re-validation, then the call): nothing searched.
    counts, value = rest.rsplit(maxsplit=1)
    assert eval(counts) == {"vectorised": 2}
    assert float(value) == 3.0


def test_mode_off_serves_the_default_and_measures_nothing():
    report = scale_op.make_op(tunekit.Tuner(mode="off")).tune(n=N)
    assert report.winner == "elementwise" and not report.candidates
    assert not scale_op.calls


def test_an_exception_in_a_served_call_reaches_the_caller_as_raised():
    op = tunekit.Op("test_fails_live", key=lambda x: {"n": len(x)}, tuner=tunekit.Tuner(),
                    candidates=[lambda x: 1 / 0], inputs=None)
    with pytest.raises(ZeroDivisionError):
        op(np.ones(3))


def test_a_keyboard_interrupt_stops_the_search_and_is_raised_again():
    def interrupted(x):
        raise KeyboardInterrupt

    op = tunekit.Op("test_interrupt", key=lambda x: {"n": len(x)}, inputs=scale_op.make_inputs,
                    candidates=[np.copy, interrupted], tuner=tunekit.Tuner())
    with pytest.raises(KeyboardInterrupt):
        op.tune(n=8)
    assert tunekit.cache.ls(op="test_interrupt") == []  # nothing half-decided was stored


def test_an_inputs_generator_that_raises_leaves_the_default_and_says_why():
    def no_inputs(key):
        raise ValueError("cannot make inputs")

    op = tunekit.Op("test_bad_inputs", key=lambda x: {"n": len(x)}, inputs=no_inputs,
                    candidates=[np.copy, np.array], tuner=tunekit.Tuner())
    report = op.tune(n=3)
    assert (report.source, report.winner) == ("pre_search_failure", "copy")
    assert "the inputs generator raised ValueError: cannot make inputs" in report.reason


def test_bad_definitions_and_keys_say_what_to_do():
    with pytest.raises(tunekit.UsageError, match="unknown numerics 'fast'"):
        scale_op.make_op().candidate(lambda x: x, name="odd", numerics="fast")
    with pytest.raises(tunekit.UsageError, match="key must be a callable"):
        tunekit.Op("bad", key=None)
    with pytest.raises(tunekit.UsageError, match="tolerance"):
        tunekit.Op("bad", key=len, tolerance="tight")
    op = tunekit.Op("test_bad_key", key=lambda x: {"n": [1, 2]}, tuner=tunekit.Tuner(),
                    candidates={"only": lambda x: x})
    with pytest.raises(tunekit.UsageError, match="a key or config value is an int, float, str"):
        op(np.ones(2))
    with pytest.raises(tunekit.UsageError, match="has no input generator"):
        tunekit.Op("test_no_inputs", key=lambda x: {"n": len(x)}, candidates=[np.copy, np.array],
                   tuner=tunekit.Tuner()).tune(n=3)
    with pytest.raises(tunekit.UsageError, match="a key must be a dict"):
        tunekit.Op("test_int_key", key=len, candidates=[np.copy], tuner=tunekit.Tuner())(
            np.ones(2))
    with pytest.raises(tunekit.UsageError, match="has a candidate 'vectorised' already"):
        scale_op.make_op().candidate(lambda x: x, name="vectorised")
    with pytest.raises(tunekit.UsageError, match="default candidate 'missing' does not exist"):
        tunekit.Op("test_no_default", key=lambda x: {"n": 1}, inputs=scale_op.make_inputs,
                   default="missing", candidates=[np.copy],
                   tuner=tunekit.Tuner()).tune(n=4)


def test_search_measures_again_whatever_the_table_holds():
    tuner = tunekit.Tuner()
    op = scale_op.make_op(tuner)
    assert tuner.decision(op, n=N) is None  # nothing served yet
    op.tune(n=N)
    scale_op.calls.clear()
    again = tuner.search(op, n=N)
    assert again.source == "searched" and again.winner == "vectorised"
    assert scale_op.calls["elementwise"] > 0  # the default was measured again
