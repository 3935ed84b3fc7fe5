// (a) Every candidate of the small CUDA spaces, a seeded sample of sgemm's and every anchor
// (cuBLAS), built through the op's build step on every core, then validated against the CPU
// reference at odd shapes (every tile and vector width meets a tail), as the CUDA kernel tests
// do on fewer points. Validation is the library's own: Reference::check poisons the outputs,
// runs the candidate and compares, exactly as the tuner's validation run does.
#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "cuda_gpu_check/gpu_check.hpp"
#include "tunekit/cuda_catalog.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/validate.hpp"

namespace gpu_check {
namespace {

using tunekit::Key;
using tunekit::OpBase;
using tunekit::Outcome;
using tunekit::Status;

constexpr std::uint64_t kSampleSeed = 20240615;  // recorded in the JSON
constexpr std::size_t kEveryPointUpTo = 2000;    // larger spaces are sampled
constexpr std::size_t kMaxListedFailures = 200;

// The odd shapes of each op: sizes prime or one, so every tile, vector width and thread count
// meets a tail. An op not listed is validated at its example shape.
std::vector<std::string> odd_shapes(std::string_view op) {
  if (op == "sgemm") return {"m=67,n=93,k=41", "m=1,n=257,k=129"};
  if (op == "softmax" || op == "rmsnorm") return {"rows=7,cols=1003"};
  if (op == "conv2d") return {"h=37,w=53,fh=3,fw=5"};
  return {};
}

struct Tally {
  std::size_t checked = 0, ok = 0, validation_failed = 0, rejected = 0, other = 0;
  std::size_t not_reached = 0;
  std::map<std::string, std::size_t> by_status;
  nlohmann::json failures = nlohmann::json::array();

  void add(const Tally& t) {
    checked += t.checked;
    ok += t.ok;
    validation_failed += t.validation_failed;
    rejected += t.rejected;
    other += t.other;
    not_reached += t.not_reached;
    for (const auto& [s, n] : t.by_status) by_status[s] += n;
    for (const auto& f : t.failures)
      if (failures.size() < kMaxListedFailures) failures.push_back(f);
  }
};

// The points checked: the default and every anchor, then every point of a small space or a
// seeded sample of a large one.
std::vector<std::size_t> points_of(const OpBase& op, const Key& key, std::size_t sample) {
  std::vector<std::size_t> out;
  auto add = [&out](std::size_t i) {
    if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
  };
  add(op.default_index(key));
  for (const std::size_t i : op.anchor_indices()) add(i);
  if (op.size() <= kEveryPointUpTo) {
    for (std::size_t i = 0; i < op.size(); ++i) add(i);
  } else {
    tunekit::Rng rng(kSampleSeed);
    for (const std::size_t i : op.enumeration().sample(std::min(sample, op.size()), rng)) add(i);
  }
  return out;
}

Outcome outcome_of_exception() {
  try {
    throw;
  } catch (const tunekit::TrialError& e) {
    return {e.status(), e.what()};
  } catch (const std::exception& e) {
    return {Status::compile_failed, e.what()};
  }
}

// Builds the points on every core (the op's build step is thread-safe), until the deadline:
// a point not reached stays empty.
std::vector<std::optional<Outcome>> build_all(tunekit::Workload& workload,
                                              const std::vector<std::size_t>& points,
                                              const Deadline& deadline) {
  std::vector<std::optional<Outcome>> built(points.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t j = next++; j < points.size() && !deadline.passed(); j = next++) {
      try {
        built[j] = workload.build_candidate(points[j]);
      } catch (...) {
        built[j] = outcome_of_exception();
      }
    }
  };
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  for (std::thread& t : pool) t.join();
  return built;
}

// The eligibility check, then validation on every input set the op declares.
Outcome validate_point(const OpBase& op, const Key& key, std::size_t index,
                       std::vector<std::unique_ptr<tunekit::Workload>>& sets,
                       const std::vector<tunekit::Reference>& references) {
  const tunekit::Candidate candidate = op.candidate(index);
  if (candidate.eligible) {
    if (std::optional<std::string> why = candidate.eligible(key)) return {Status::rejected, *why};
  }
  for (std::size_t s = 0; s < sets.size(); ++s) {
    Outcome o = references[s].check(*sets[s], index, op.tolerance(key));
    if (!o.ok()) {
      if (s > 0) o.message = fmt::format("input set {}: {}", s + 1, o.message);
      return o;
    }
  }
  return Outcome::success();
}

void count(Tally& tally, const OpBase& op, const std::string& shape, std::size_t index,
           const Outcome& o) {
  ++tally.checked;
  ++tally.by_status[std::string(tunekit::to_string(o.status))];
  if (o.ok()) {
    ++tally.ok;
    return;
  }
  if (o.status == Status::rejected) {
    ++tally.rejected;
    return;
  }
  (o.status == Status::validation_failed ? tally.validation_failed : tally.other)++;
  if (tally.failures.size() < kMaxListedFailures)
    tally.failures.push_back({{"op", op.name()},
                              {"shape", shape},
                              {"candidate", op.candidate(index).name},
                              {"status", tunekit::to_string(o.status)},
                              {"message", clipped(o.message, 2000)}});
}

// Every point at one shape: inputs and references for each input set, the builds, then one
// validation per point. A lost context ends the check (nothing more can run).
Tally validate_shape(Setup& setup, const OpBase& op, const std::string& shape,
                     const std::vector<std::size_t>& points, const Deadline& deadline) {
  const Key key = op.parse_shape(shape);
  std::vector<std::unique_ptr<tunekit::Workload>> sets;
  std::vector<tunekit::Reference> references;
  for (int s = 0; s < op.input_sets(); ++s) {
    sets.push_back(op.make_workload(key, s));
    references.push_back(
        tunekit::Reference::capture(*sets.back(), op.has_reference(), op.default_index(key)));
  }
  const std::vector<std::optional<Outcome>> built = build_all(*sets.front(), points, deadline);
  Tally tally;
  for (std::size_t j = 0; j < points.size(); ++j) {
    if (!built[j] || deadline.passed()) {
      ++tally.not_reached;
      continue;
    }
    Outcome o = *built[j];
    if (o.ok()) o = validate_point(op, key, points[j], sets, references);
    count(tally, op, shape, points[j], o);
    if (setup.context->lost())
      throw tunekit::FatalError("the CUDA context was lost while " + op.candidate(points[j]).name +
                                " ran: " + setup.context->lost_reason());
  }
  return tally;
}

std::vector<std::string> table_row(const std::string& op, const std::string& shape,
                                   std::size_t points, const Tally& t) {
  return {op,
          shape,
          std::to_string(points),
          std::to_string(t.ok),
          std::to_string(t.validation_failed),
          std::to_string(t.rejected),
          std::to_string(t.other),
          std::to_string(t.not_reached)};
}

// One op at each of its shapes; a shape the op refuses falls back to its example shape.
Tally validate_op(Setup& setup, const tunekit::cuda::CatalogEntry& entry, std::size_t sample,
                  const Deadline& deadline, CheckResult& result) {
  std::unique_ptr<OpBase> op = entry.make(setup.context, *setup.pool);
  std::vector<std::string> shapes = odd_shapes(entry.name);
  if (shapes.empty()) shapes.push_back(entry.example_shape);
  Tally total;
  std::vector<std::size_t> points;
  for (std::string shape : shapes) {
    try {
      op->parse_shape(shape);
    } catch (const tunekit::UsageError& e) {
      result.notes.push_back(
          fmt::format("{}: the shape {} was refused ({}); validated at its "
                      "example shape {} instead",
                      entry.name, shape, e.what(), entry.example_shape));
      shape = entry.example_shape;
    }
    if (points.empty()) points = points_of(*op, op->parse_shape(shape), sample);
    const Tally t = validate_shape(setup, *op, shape, points, deadline);
    result.rows.push_back(table_row(entry.name, shape, points.size(), t));
    result.data["shapes"].push_back({{"op", entry.name},
                                     {"shape", shape},
                                     {"space_size", op->size()},
                                     {"points", points.size()},
                                     {"anchors", op->anchor_indices().size()},
                                     {"ok", t.ok},
                                     {"validation_failed", t.validation_failed},
                                     {"rejected", t.rejected},
                                     {"other", t.other},
                                     {"not_reached", t.not_reached},
                                     {"by_status", t.by_status}});
    total.add(t);
  }
  return total;
}

// The small spaces first, so a time box that runs out cuts sgemm's sample, not them.
std::vector<const tunekit::cuda::CatalogEntry*> ops_in_order() {
  std::vector<const tunekit::cuda::CatalogEntry*> out;
  for (const auto& e : tunekit::cuda::builtin_ops()) out.push_back(&e);
  std::stable_partition(out.begin(), out.end(), [](const auto* e) { return e->name != "sgemm"; });
  return out;
}

void conclude(CheckResult& r, const Tally& total) {
  r.summary = fmt::format(
      "{} checked: {} ok, {} validation_failed, {} rejected, {} other; {} not "
      "reached",
      total.checked, total.ok, total.validation_failed, total.rejected, total.other,
      total.not_reached);
  r.data["ok"] = total.ok;
  r.data["validation_failed"] = total.validation_failed;
  r.data["rejected"] = total.rejected;
  r.data["other"] = total.other;
  r.data["not_reached"] = total.not_reached;
  r.data["by_status"] = total.by_status;
  r.data["failures"] = total.failures;
  if (total.validation_failed + total.other > 0) {
    r.verdict = Verdict::fail;
  } else if (total.not_reached > 0) {
    r.verdict = Verdict::miss;
    r.notes.push_back(
        fmt::format("the time box ran out: {} points were not validated (run "
                    "without --quick, or with a larger --seconds)",
                    total.not_reached));
  } else {
    r.verdict = total.checked > 0 ? Verdict::pass : Verdict::error;
  }
  std::size_t listed = 0;
  for (const auto& f : total.failures) {
    if (++listed > 25) break;
    r.notes.push_back(fmt::format("{} {} {}: {}: {}", f["op"].get<std::string>(),
                                  f["shape"].get<std::string>(), f["candidate"].get<std::string>(),
                                  f["status"].get<std::string>(),
                                  clipped(f["message"].get<std::string>())));
  }
}

}  // namespace

CheckResult check_validation(Setup& setup, double seconds) {
  CheckResult r;
  r.columns = {"op",       "shape", "points",     "ok", "validation_failed",
               "rejected", "other", "not reached"};
  const auto start = std::chrono::steady_clock::now();
  const Deadline deadline(seconds);
  const std::size_t sample = setup.quick ? 80 : 300;
  r.data["sgemm_sample"] = sample;
  r.data["seed"] = kSampleSeed;
  r.data["shapes"] = nlohmann::json::array();
  const tunekit::cuda::BuildStats before = setup.context->compiler().stats();
  Tally total;
  try {
    for (const auto* entry : ops_in_order())
      total.add(validate_op(setup, *entry, sample, deadline, r));
    conclude(r, total);
  } catch (const std::exception& e) {
    conclude(r, total);
    r.verdict = Verdict::error;
    r.notes.insert(r.notes.begin(), std::string("stopped: ") + e.what());
  }
  const tunekit::cuda::BuildStats after = setup.context->compiler().stats();
  r.data["nvrtc_builds"] = after.builds - before.builds;
  r.data["nvrtc_seconds"] = after.seconds - before.seconds;
  r.seconds = since(start);
  return r;
}

}  // namespace gpu_check
