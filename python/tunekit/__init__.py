"""tunekit: picks the fastest correct implementation of an op on this machine, and keeps it.

    import tunekit
    tuner = tunekit.Tuner()
    report = tuner.tune("sgemm", shape={"m": 256, "n": 256, "k": 256})
    print(report.winner, report.to_dict()["candidates"][0]["status"])

Python ops (tunekit.Op) are validated against their reference, timed with tunekit's own
instrument, stored in the same store as C++ choices, and served by op(*args).
See docs/python.md."""

import json as _json

from ._errors import Error, UsageError
from . import _tunekit
from ._report import CandidateResult, Report
from ._op import Op
from ._tuner import Decision, Tuner, default_tuner
from . import cache

__version__ = "0.2.0"

__all__ = ["Error", "UsageError", "Op", "Tuner", "Decision", "Report", "CandidateResult",
           "default_tuner", "cache", "ops", "replay", "space", "calibrate", "explain"]


def ops():
    """The built-in ops: name, description and an example shape each (`tunekit ops`)."""
    return list(_tunekit.ops())


def replay(dataset, *, strategy="auto", schedule="full", budget_evals=0, budget=0.0, seed=1):
    """`tunekit replay`: the live tuner's search on a recorded space (a Kernel Tuner cache or
    T4 file), on simulated time (budget in simulated seconds). A dict: the dataset's optimum,
    the run's evaluations, best time and config, its fraction of the optimum, and "report" (a
    Report)."""
    result = _tunekit.replay(str(dataset), strategy, schedule, budget_evals, float(budget), seed)
    result["report"] = Report(result["report"])
    return result


def space(file, *, limit=0):
    """`tunekit space FILE --list N`: a T1 space file's parameters, constraint count, Cartesian
    size, number of valid configurations, and the first `limit` of them (dicts)."""
    return _tunekit.space(str(file), limit)


def calibrate(*, quick=False, threads=0, out=None):
    """`tunekit calibrate`: measures this machine's envelope for the cost model and writes the
    device profile (to `out`, else where tuners find it: profiles/ beside the store). The
    profile as a dict, with "path" added."""
    text, path = _tunekit.calibrate(quick, threads, str(out) if out else "")
    profile = _json.loads(text)
    profile["path"] = path
    return profile


def explain(op, shape=None, *, profile=None, store=None, numerics=None, **fields):
    """`tunekit explain --json`: the cost model's view of every candidate (nothing measured)."""
    options = {k: v for k, v in (("profile", profile), ("store", store),
                                 ("numerics", numerics)) if v is not None}
    return Tuner(mode="off", **options).explain(op, shape, **fields)
