// The wall-clock budget of one search (DESIGN §7): pure rules over a clock, so tests drive
// them with a scripted one.
#pragma once

#include <functional>
#include <initializer_list>

namespace tunekit::detail {

// A part of the decision the budget may hold time for: `whole` (a pairing's paired.min_pairs
// + 2 pairs of one launch a side, both sides prepared again) and `least` (the fewest it runs
// with: paired.min_pairs pairs; a check: the whole of it).
struct DecisionPart {
  double whole = 0, least = 0;
};
// The parts that fit, in order, in `room` seconds: each held whole where it fits, or what is
// left of the room where its least run fits; one whose least run does not fit is not held (it
// would not run) and the later ones are still tried.
double fitting(std::initializer_list<DecisionPart> parts, double room);

class SearchBudget {
 public:
  // `seconds` 0: no budget. `now` reads the budget clock (seconds, monotonic).
  SearchBudget(double seconds, std::function<double()> now);

  bool limited() const { return seconds_ > 0; }
  double seconds() const { return seconds_; }
  double elapsed() const;
  // The projection of one build: the costliest build so far (0 before the first).
  double projected_build() const { return projected_; }
  // The reserve held back at the end of the budget: the winner's rebuild (one projected
  // build) and the decision's paired confirmations (decision_reserve).
  double reserve() const { return projected_ + decision_reserve(); }
  void saw_build(double seconds);
  // Time held for the decision (the check of an unchecked pick; its pairings with the
  // default, the best anchor and a tied rival): what `cost(cap)` projects within `cap` (the
  // parts that fit, `fitting`) — read on every check, so it must be cheap — the cap `share` of
  // the budget (0, or over one half: one half), so a slow default cannot take the search's
  // time.
  void hold_for_decision(std::function<double(double cap)> cost, double share);
  double decision_reserve() const;

  // A point may be built only while the elapsed time plus two projected builds (its own and
  // the reserve) fits.
  bool admits_build() const;
  // A point's timing may start (and a running window goes on) only before the budget less the
  // reserve; a point whose admission (`lead` seconds, not cut by the budget) comes first
  // starts only when it ends before that line too.
  bool admits_timing(double lead = 0) const;
  // The whole budget is spent (the default's timing, exempt otherwise, does not start).
  bool spent() const;

 private:
  double seconds_;
  std::function<double()> now_;
  double start_;
  double projected_ = 0;
  std::function<double(double)> decision_cost_;
  double decision_share_ = 0;
};

}  // namespace tunekit::detail
