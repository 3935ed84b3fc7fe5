// Problem, CandidateSet and the cache key: one canonical encoding (Key's length-delimited
// one) and one digest (XXH3-128, Digest::of) for every identity the controller keeps.
#include <bit>
#include <cmath>
#include <string>

#include "stack/problem_check.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/stack.hpp"
#include "tunekit/validate.hpp"
#include "validate/output_elements.hpp"

namespace tunekit::stack {
namespace {

// A digest's two halves as integer fields: nothing to format or allocate.
Field half(const char* name, std::uint64_t bits) {
  return {name, std::bit_cast<std::int64_t>(bits)};
}

}  // namespace

std::string Problem::encode() const {
  return Key{
      {"scope", std::string(to_string(scope))}, {"name", name}, {"signature", signature.encode()}}
      .encode();
}

Digest Problem::workload_digest() const {
  return Digest::of(encode());
}

// Fields n, then c<i> (name) and v<i> (version) per candidate in order, then the reference's
// index (-1: none): distinct names, so Key's encoding of them is unambiguous.
Digest CandidateSet::checksum() const {
  std::vector<Field> fields;
  fields.reserve(2 * candidates.size() + 2);
  fields.push_back({"n", static_cast<std::int64_t>(candidates.size())});
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    fields.push_back({"c" + std::to_string(i), candidates[i].name});
    fields.push_back({"v" + std::to_string(i), static_cast<std::int64_t>(candidates[i].version)});
  }
  const bool known = reference && *reference < candidates.size();
  fields.push_back({"reference", known ? static_cast<std::int64_t>(*reference) : -1});
  return Key(std::move(fields)).digest();  // Key's digest is that of its encoding
}

// The signature enters by its digest (computed when the Key was made), the candidate set by
// its checksum: called on every request, so nothing here formats a digest as text.
Digest cache_key(const Problem& problem, const CandidateSet& set) {
  const Tolerance& t = problem.tolerance;
  const Digest sig = problem.signature.digest();
  const Digest cands = set.checksum();
  const Key key{{"scope", std::string(to_string(problem.scope))},
                {"name", problem.name},
                half("sig.h", sig.high),
                half("sig.l", sig.low),
                half("set.h", cands.high),
                half("set.l", cands.low),
                {"abs", t.abs},
                {"rel", t.rel},
                {"readback", static_cast<std::int64_t>(t.max_readback_elements)}};
  return key.digest();
}

std::uint64_t Workspace::output_elements() {
  std::uint64_t n = 0;
  for (const OutputView& v : outputs()) n += v.count;
  return n;
}

void Workspace::poison() {
  tunekit::poison(outputs());
}

std::vector<double> Workspace::read(std::span<const std::uint64_t> positions) {
  const std::vector<OutputView> views = outputs();
  std::vector<double> values;
  values.reserve(positions.size());
  std::size_t view = 0;
  std::uint64_t start = 0;  // first position of views[view]
  for (std::uint64_t p : positions) {
    while (view < views.size() && p >= start + views[view].count) start += views[view++].count;
    if (view == views.size()) throw UsageError("workspace read past its outputs");
    const OutputView& v = views[view];
    const auto i = static_cast<std::size_t>(p - start);
    values.push_back(v.integral() ? static_cast<double>(detail::integer_element(v, i))
                                  : detail::float_element(v, i));
  }
  return values;
}

}  // namespace tunekit::stack

namespace tunekit::detail {

void check_stack_metadata(const stack::Problem& problem, const stack::CandidateSet& set) {
  auto fail = [&](const std::string& what) {
    throw UsageError("stack problem '" + problem.name + "': " + what);
  };
  if (problem.name.empty()) fail("the problem has no name; give it one (it names the decision)");
  if (problem.signature.fields().empty())
    fail("the signature is empty; list the fields that identify the workload");
  if (!problem.make_workspace)
    fail("no make_workspace; trials need a fresh workspace of their own");
  const stack::Tolerance& t = problem.tolerance;
  // Finite too: rel = inf makes the limit inf * 0 = NaN on a zero element, so an exact match
  // would fail, and abs = inf would pass an infinite output.
  if (!(t.abs >= 0) || !(t.rel >= 0) || !std::isfinite(t.abs) || !std::isfinite(t.rel))
    fail("the tolerance's abs and rel must be finite numbers >= 0");
  if (t.max_readback_elements == 0)
    fail(
        "tolerance.max_readback_elements is 0: validation would compare nothing; allow at "
        "least 1");
  if (!set.reference) fail("no reference candidate; set CandidateSet::reference");
  if (*set.reference >= set.candidates.size())
    fail("the reference index " + std::to_string(*set.reference) + " is out of range (" +
         std::to_string(set.candidates.size()) + " candidates)");
  for (std::size_t i = 0; i < set.candidates.size(); ++i) {
    const stack::StackCandidate& c = set.candidates[i];
    if (c.name.empty()) fail("candidate " + std::to_string(i) + " has no name");
    if (!c.run) fail("candidate '" + c.name + "' has no run function");
    for (std::size_t j = 0; j < i; ++j)
      if (set.candidates[j].name == c.name) fail("two candidates are named '" + c.name + "'");
  }
}

}  // namespace tunekit::detail
