"""tunekit.Tuner: serves, searches and stores choices on this machine's CPU."""

import threading

from . import _tunekit
from ._errors import UsageError
from ._report import Report


def _shape(shape, fields):
    if shape is not None and fields:
        raise UsageError("give the key as shape={...} or as keywords, not both")
    return dict(fields) if fields else shape


def _native_op(op):
    from ._op import Op
    return op._native if isinstance(op, Op) else op


class Decision:
    """The choice a tuner serves for a key: the candidate, its index and its source."""

    def __init__(self, candidate, index, source):
        self.candidate, self.index, self.source = candidate, index, source

    def __repr__(self):
        return f"<Decision {self.candidate} (source {self.source})>"


class Tuner:
    """A tunekit Tuner on this machine's CPU.

    Options default to the environment's, as the CLI's do (TUNEKIT_MODE, TUNEKIT_CACHE_DIR,
    TUNEKIT_ARTIFACT_DIR, TUNEKIT_STORE_WAIT_MS, TUNEKIT_TRUST_STORE, TUNEKIT_MODEL_SERVE), and
    keywords override them as `tunekit tune`'s flags do: store ("sqlite:PATH", "none" for memory
    only, "sqlite" for the default file), mode (off | cached | tune | force), strategy
    ("genetic:pop=20"), schedule ("full" | "racing"), seed, budget (seconds), budget_evals,
    statistic (median | min), tie_band, numerics (bitwise | reassociates | approximate),
    confirm_pairs, finalists, finalist_band, isolation (automatic | worker | in_process), timing (isolated | queued),
    evict, rotate, check_every_candidate, artifact_dir, profile, wait_for_device (seconds);
    threads: the built-in ops' worker threads (0: one per core)."""

    def __init__(self, *, threads=0, **options):
        if not isinstance(threads, int) or isinstance(threads, bool) or not 0 <= threads <= 4096:
            raise UsageError(f"Tuner(threads={threads!r}): give an int in 0..4096 "
                             "(0: one per core)")
        self._native = _tunekit._Tuner(threads, options)

    @property
    def store(self):
        """The store's spec ("sqlite:/path/choices.db"), or "none"."""
        return self._native.store

    @property
    def mode(self):
        return self._native.mode

    def tune(self, op, shape=None, **fields):
        """What `tunekit tune` does: the answer for the key as the mode allows (a search on a
        miss in mode tune; the store's choice when it has one), as a Report. op: a built-in
        op's name ("sgemm", see tunekit.ops()) or a tunekit.Op; shape: a dict, the text
        "m=256,n=256", or keywords (m=256, n=256)."""
        return Report(self._native.tune(_native_op(op), _shape(shape, fields)))

    def search(self, op, shape=None, **fields):
        """Searches now, whatever the mode and the store say, and serves the winner."""
        return Report(self._native.search(_native_op(op), _shape(shape, fields)))

    def run(self, op, *args):
        """op(*args) through this tuner: calls the chosen candidate, returns its result."""
        return self._native.run(op._native, args)

    def explain(self, op, shape=None, **fields):
        """Every candidate's cost-model score, admission and stored measurement, and the
        model's pick (`tunekit explain --json`): nothing is measured."""
        import json
        return json.loads(self._native.explain(_native_op(op), _shape(shape, fields)))

    def decision(self, op, shape=None, **fields):
        """The choice this tuner already serves for the key (from memory), or None."""
        found = self._native.decision(_native_op(op), _shape(shape, fields))
        return None if found is None else Decision(*found)

    def __repr__(self):
        return f"<tunekit.Tuner mode {self.mode}, store {self.store}>"


_default = None
_default_lock = threading.Lock()


def default_tuner():
    """The tuner op(*args) uses when the op was given none: made on first use, with the
    environment's options."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Tuner()
        return _default
