"""tunekit.Op: a tunable operation whose candidates are Python callables on NumPy arrays."""

import inspect

from . import _tunekit
from ._errors import UsageError


def _tolerance(tolerance):
    """(abs, rel) from a float (both), a pair, or a dict {"abs": .., "rel": ..}."""
    if tolerance is None:
        return 1e-6, 1e-5  # tunekit::Tolerance's defaults
    if isinstance(tolerance, (int, float)):
        return float(tolerance), float(tolerance)
    if isinstance(tolerance, dict):
        unknown = set(tolerance) - {"abs", "rel"}
        if unknown:
            raise UsageError(f"tolerance: unknown fields {sorted(unknown)}: use abs and rel")
        return float(tolerance.get("abs", 1e-6)), float(tolerance.get("rel", 1e-5))
    try:
        abs_, rel = tolerance
        return float(abs_), float(rel)
    except (TypeError, ValueError):
        raise UsageError(f"tolerance={tolerance!r}: give a float, (abs, rel) or "
                         "{'abs': .., 'rel': ..}") from None


def _input_sets(inputs, name):
    """1 when the generator takes (key), 2 when it takes (key, input_set)."""
    if inputs is None:
        return 1
    if not callable(inputs):
        raise UsageError(f"op {name!r}: inputs must be a callable (key) -> arguments")
    try:
        params = [p for p in inspect.signature(inputs).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
    except (TypeError, ValueError):
        return 1
    if len(params) not in (1, 2):
        raise UsageError(f"op {name!r}: inputs takes (key) or (key, input_set), "
                         f"not {len(params)} arguments")
    return len(params)


class Op:
    """A tunable operation: candidates are Python callables taking the op's arguments and
    returning the result (a NumPy array, or a tuple of them); they must not modify their inputs.

    key(*args) -> dict of int/float/str/bool fields names the workload (fields are sorted by
    name); reference(*args) defines the correct result (else the default's result does);
    tolerance is abs = rel for a float, or (abs, rel); inputs(key) (or inputs(key, input_set)
    for two input sets) makes arguments for a key, so it can be tuned without the caller's data.
    The first candidate is the default unless `default` names another. Bump `version` of a
    candidate (or `reference_version`) when its code changes: stored choices are then re-made.

    op(*args) calls the candidate the tuner chose for the arguments' key (searching on a miss,
    as the tuner's mode says) and returns what it returns."""

    def __init__(self, name, *, key, reference=None, tolerance=None, inputs=None,
                 candidates=(), default=None, schema=1, reference_version=1, description="",
                 tuner=None):
        if not callable(key):
            raise UsageError(f"op {name!r}: key must be a callable (*args) -> dict")
        if reference is not None and not callable(reference):
            raise UsageError(f"op {name!r}: reference must be a callable (*args) -> result")
        abs_, rel = _tolerance(tolerance)
        self._native = _tunekit._Op(name, schema, description, key, inputs,
                                    _input_sets(inputs, name), reference, reference_version,
                                    abs_, rel)
        self.tuner = tuner
        items = candidates.items() if isinstance(candidates, dict) else candidates
        for item in items:
            if isinstance(item, tuple):
                self.candidate(item[1], name=item[0])
            else:
                self.candidate(item)
        if default is not None:
            self._native.set_default(default)

    @property
    def name(self):
        return self._native.name

    @property
    def candidates(self):
        """The candidates' names, in order."""
        return list(self._native.candidates)

    def candidate(self, fn=None, *, name=None, numerics="bitwise", version=1):
        """Adds a candidate; as a decorator: @op.candidate or @op.candidate(numerics=...).

        numerics: bitwise (same results as the default), reassociates (another summation
        order) or approximate; the tuner's numerics policy admits or declines each."""
        def add(f):
            if not callable(f):
                raise UsageError(f"op {self.name!r}: a candidate is a callable, not {f!r}")
            self._native.add_candidate(name or f.__name__, f, numerics, version)
            return f
        return add if fn is None else add(fn)

    def _tuner(self):
        if self.tuner is None:
            from ._tuner import default_tuner
            return default_tuner()
        return self.tuner

    def __call__(self, *args):
        return self._tuner().run(self, *args)

    def tune(self, shape=None, **fields):
        """Tunes a key with the op's input generator, through its tuner: a Report."""
        return self._tuner().tune(self, shape, **fields)

    def __repr__(self):
        return f"<tunekit.Op {self.name}: {', '.join(self.candidates)}>"
