// Shared setup for the stack controller tests: a problem over FloatWorkspace, a candidate set
// with a reference, a controller on the scripted runner.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fakes/stack_fakes.hpp"
#include "tunekit/stack.hpp"

namespace tunekit::stack::test {

inline Problem make_problem(std::string name = "block", std::int64_t tokens = 512,
                            std::size_t elements = 64, Scope scope = Scope::graph) {
  Problem p;
  p.scope = scope;
  p.name = std::move(name);
  p.signature = Key{{"tokens", tokens}, {"d", std::int64_t{512}}, {"dtype", "f32"}};
  p.make_workspace = [elements] { return std::make_unique<fakes::FloatWorkspace>(elements); };
  return p;
}

// "reference" (index 0) plus the named alternatives, all computing the right answer.
inline CandidateSet make_set(std::vector<std::string> alternatives = {"fast"}) {
  CandidateSet set;
  set.candidates.push_back(fakes::doubling("reference"));
  for (std::string& a : alternatives) set.candidates.push_back(fakes::doubling(std::move(a)));
  set.reference = 0;
  return set;
}

// The reference takes 1 s a trial, `fast` 0.5 s, everything else 1 s.
inline std::shared_ptr<fakes::ScriptedTrialRunner> make_runner() {
  auto r = std::make_shared<fakes::ScriptedTrialRunner>();
  r->seconds = [](const std::string& name, int) { return name == "fast" ? 0.5 : 1.0; };
  return r;
}

inline StackOptions options_with(std::shared_ptr<TrialRunner> runner, Mode mode = Mode::explore) {
  StackOptions o;
  o.mode = mode;
  o.runner = std::move(runner);
  o.policy.samples = 8;
  return o;
}

}  // namespace tunekit::stack::test
