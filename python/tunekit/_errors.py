"""The exceptions tunekit raises (the native module translates the library's into these)."""


class UsageError(ValueError):
    """API misuse: an unknown op, a bad shape, a malformed option. The message says what to do."""

    __module__ = "tunekit"


class Error(RuntimeError):
    """A fatal failure: a device lost, a broken invariant. Classified failures of candidates are
    never raised: they are in the report."""

    __module__ = "tunekit"
