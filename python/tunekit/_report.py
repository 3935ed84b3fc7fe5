"""Reports: what a tune did, as attributes and as the JSON reporter's dict (`to_dict()`)."""

import copy
import json


class CandidateResult:
    """One candidate of a report: its classified status and, when measured, its reading."""

    def __init__(self, fields):
        self._fields = fields
        self.name = fields["name"]
        self.status = fields["status"]  # ok, validation_failed, launch_failed, ...
        self.message = fields["message"]  # why, for a failure (the exception's text)
        self.is_default = fields["is_default"]
        self.winner = fields["winner"]
        self.score = fields["score"]  # the ranking statistic, seconds (ok only)
        self.vs_default = fields["vs_default"]  # default's score / this score (>1: faster)
        # Its checked calls ran after a window: only candidates that could win are checked.
        self.checked = fields.get("checked", False)
        # Timed again in the final race: its reading is the race's, and search_score what the
        # search's own window read (None when not a finalist).
        self.finalist = fields.get("finalist", False)
        self.search_score = fields.get("search_score")
        timing = fields.get("timing") or {}
        self.median = timing.get("median")  # seconds per call, None when not timed
        self.min = timing.get("min")
        self.mad = timing.get("mad")
        self.samples = len(timing.get("samples", []))

    @property
    def ok(self):
        return self.status == "ok"

    def to_dict(self):
        return copy.deepcopy(self._fields)

    def __repr__(self):
        timed = f", median={self.median:.3g}s" if self.median else ""
        return f"<CandidateResult {self.name}: {self.status}{timed}>"


class Report:
    """What one tune did (the fields of `tunekit tune --json`).

    winner: the chosen candidate's name; source: where the answer came from (searched,
    cache_replay for the store, memory_hit, default, ...); candidates: every candidate the
    search touched, in evaluation order (a stored choice's: the evidence it was stored with;
    empty when nothing was measured)."""

    def __init__(self, text_or_dict):
        fields = json.loads(text_or_dict) if isinstance(text_or_dict, str) else text_or_dict
        self._fields = fields
        self.op = fields["op"]
        self.key = fields["key"]
        self.source = fields["source"]
        self.reason = fields["reason"]
        self.winner = fields["winner"]
        self.default = fields["default"]
        self.speedup = fields["speedup"]
        self.winner_score = fields["winner_score"]
        self.default_score = fields["default_score"]
        self.candidates = [CandidateResult(c) for c in fields["candidates"]]
        # The final pairings of the measured winner, each a dict with rival, candidate, pairs,
        # ratio (candidate / rival, the pairs' median), ratio_high, kept_candidate and why;
        # None when not paired. tie_pairing: the tie order's pick against the fastest reading
        # it was tied with; anchor_pairing: a winner that is not one of the op's anchors (a
        # library solution, e.g. OpenBLAS for the CPU sgemm) against the best anchor.
        self.tie_pairing = fields.get("tie_pairing")
        self.anchor_pairing = fields.get("anchor_pairing")
        # How sure the decision is (a dict: runner_up, advantage = runner-up / winner,
        # advantage_low its 95 % lower bound, verdict, and what the pairings measured:
        # paired_high, anchor, anchor_paired_ratio, tie_rival, tie_paired_ratio, waited_share);
        # None when no search decided by timing (docs/guide.md "How a search decides").
        search = fields.get("search") or {}
        self.confidence = search.get("confidence")
        # The final race (a dict: finalists timed again, seconds, search_pick — what the
        # search's own readings picked — and note, why it did not run); None when absent.
        self.final_race = search.get("final_race")
        # Where the host ran two of the device's CPUs around the search (a dict: before_ns,
        # after_ns, the round trip of a cache line between them; with the placement wait on,
        # lowest_ns, waits, waited_seconds, ran_far where not 0); None where the device cannot
        # tell (docs/guide.md "Where the host runs the CPUs").
        self.cpu_placement = search.get("cpu_placement")

    @property
    def searched(self):
        return self.source == "searched"

    def candidate(self, name):
        """The candidate called `name`; KeyError when the search did not touch it."""
        for c in self.candidates:
            if c.name == name:
                return c
        raise KeyError(f"{name!r}: the report has {[c.name for c in self.candidates]}")

    def to_dict(self):
        """Every field of the JSON reporter's object (`tunekit tune --json`)."""
        return copy.deepcopy(self._fields)

    def __repr__(self):
        return (f"<Report {self.op} {self.key}: winner {self.winner} ({self.source}), "
                f"{len(self.candidates)} candidates, speedup {self.speedup:.2f}x>")

    def __str__(self):
        lines = [f"{self.op} {self.key}: winner {self.winner} (source {self.source})"]
        for c in self.candidates:
            mark = "*" if c.winner else " "
            timed = f"{c.median * 1e6:10.2f} us" if c.median else " " * 13
            why = f"  {c.message}" if c.message and not c.ok else ""
            lines.append(f" {mark} {c.name:<24} {c.status:<18} {timed}{why}")
        return "\n".join(lines)
