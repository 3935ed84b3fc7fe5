"""A Python op for the tests (imported by them and by the second process): y = 2 x + 1 on a
float32 vector, with a slow correct default, a wrong-but-fast candidate that returns its input,
a fast correct one and one that raises. `calls` counts each candidate's calls in this process."""

import collections

import numpy as np

import tunekit

calls = collections.Counter()


def make_inputs(key):
    rng = np.random.default_rng(7)
    return (rng.random(key["n"], dtype=np.float32),)


def reference(x):
    return (2.0 * x.astype(np.float64) + 1.0).astype(np.float32)


def make_op(tuner=None):
    op = tunekit.Op("test_scale", key=lambda x: {"n": x.shape[0]}, reference=reference,
                    tolerance=1e-5, inputs=make_inputs, tuner=tuner)

    @op.candidate
    def elementwise(x):  # the default: correct and slow (a Python loop)
        calls["elementwise"] += 1
        out = np.empty_like(x)
        for i in range(x.shape[0]):
            out[i] = 2 * x[i] + 1
        return out

    @op.candidate
    def wrong_fast(x):  # no work at all, so the fastest; wrong, and aliases its input
        calls["wrong_fast"] += 1
        return x

    @op.candidate
    def vectorised(x):
        calls["vectorised"] += 1
        return 2 * x + 1

    @op.candidate
    def raises(x):
        calls["raises"] += 1
        raise ValueError("no luck today")

    return op
