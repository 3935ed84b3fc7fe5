# %% [markdown]
# # Tuning a NumPy op with tunekit
#
# A row-wise softmax written three ways. tunekit checks each against a float64 reference,
# times the correct ones with its own instrument, keeps the fastest in its store
# ($TUNEKIT_CACHE_DIR) and serves it on every later call. Run it as a script
# (`python examples/python/tune_numpy_op.py`) or cell by cell (`# %%`) in an editor.

# %%
import numpy as np

import tunekit


def reference(x):
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def make_inputs(key):
    """Arguments for a key: so a key can be tuned without the caller's data."""
    rng = np.random.default_rng(0)
    return (rng.standard_normal((key["rows"], key["cols"]), dtype=np.float32),)


softmax = tunekit.Op(
    "example_softmax",
    key=lambda x: {"rows": x.shape[0], "cols": x.shape[1]},
    reference=reference,
    tolerance=(1e-6, 1e-4),  # (abs, rel)
    inputs=make_inputs,
)

# %% [markdown]
# Candidates are plain functions of the op's arguments that return the result. The first one
# is the default: what the caller gets when tuning is off, and the bar every other one must beat.


# %%
@softmax.candidate
def per_row(x):
    out = np.empty_like(x)
    for i, row in enumerate(x):
        e = np.exp(row - row.max())
        out[i] = e / e.sum()
    return out


@softmax.candidate(numerics="reassociates")
def vectorised(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@softmax.candidate
def wrong_scale(x):  # fast and wrong (a temperature slipped in): validation rejects it
    e = np.exp(x * 3)
    return e / e.sum(axis=1, keepdims=True)


# %% [markdown]
# Tune one key with the op's input generator, and look at the report.

# %%
report = softmax.tune(rows=256, cols=128)
print(report)
for c in report.candidates:
    print(f"{c.name:>14}: {c.status:<18} {c.median or 0:.3g} s  {c.message[:60]}")
assert report.candidate("wrong_scale").status == "validation_failed"
assert report.winner == "vectorised", report

# %% [markdown]
# Calls dispatch through the tuner's table: the first call for a key searches (in mode tune),
# later ones are a lookup and a direct call. A second process reads the choice from the store.

# %%
x = np.random.default_rng(1).standard_normal((256, 128), dtype=np.float32)
y = softmax(x)
np.testing.assert_allclose(y, reference(x), rtol=1e-4, atol=1e-6)
print(tunekit.default_tuner().decision(softmax, rows=256, cols=128))
print([(s["op"], s["key"], s["winner"]) for s in tunekit.cache.ls(op="example_softmax")])

# %% [markdown]
# The built-in C++ ops tune the same way (the GIL is released while they run).

# %%
sgemm = tunekit.Tuner(budget_evals=4).tune("sgemm", shape={"m": 64, "n": 64, "k": 64})
print(sgemm.winner, sgemm.to_dict()["source"])
