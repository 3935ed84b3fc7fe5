"""The store's choices (`tunekit cache ls`)."""

import json

from . import _tunekit


def ls(op=None, *, store=None, pending=False):
    """The stored choices (each a dict: `tunekit cache ls --json`'s fields), or those of one op;
    pending=True: the misses recorded in mode cached instead. store: "sqlite:PATH" or
    "postgresql://..." (default: $TUNEKIT_STORE, else choices.db under $TUNEKIT_CACHE_DIR, as
    the tuner uses; a password is never shown in messages). A store not created yet lists
    nothing; one that cannot be used raises tunekit.UsageError saying why."""
    return json.loads(_tunekit.cache_ls(store or "", op or "", pending))
