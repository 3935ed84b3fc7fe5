#include "tuner/model_choice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <limits>
#include <utility>
#include <vector>

#include "core/classify.hpp"
#include "tunekit/calibration.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/identity.hpp"
#include "tuner/admission.hpp"
#include "tuner/decision.hpp"

namespace tunekit::detail {
namespace {

double memory_seconds(const ModelTime& t) {
  return t.dram_seconds + t.cache_seconds;
}

// Why a work model's answer cannot be scored: a NaN or negative field would score 0 (the
// roofline guards count only positive work) and beat the default. Empty: it can be.
std::string invalid_work(const Work& w) {
  const std::pair<const char*, double> reals[] = {{"flops", w.flops},
                                                  {"compulsory_bytes", w.compulsory_bytes},
                                                  {"reread_bytes", w.reread_bytes},
                                                  {"working_set_bytes", w.working_set_bytes},
                                                  {"serial_flops", w.serial_flops},
                                                  {"scalar_flops", w.scalar_flops}};
  for (const auto& [name, v] : reals)
    if (!std::isfinite(v) || v < 0)
      return std::string("the work model gave ") + name + " = " + std::to_string(v) +
             " (must be finite and >= 0)";
  const std::pair<const char*, int> counts[] = {{"threads", w.threads},
                                                {"vector_lanes", w.vector_lanes},
                                                {"chains", w.chains},
                                                {"dispatches", w.dispatches}};
  for (const auto& [name, v] : counts)
    if (v < 0)
      return std::string("the work model gave ") + name + " = " + std::to_string(v) +
             " (must be >= 0)";
  return {};
}

// The candidate the decision rule picks among `in` (entries of `scored` with an ok outcome):
// tie band, the default first, then preference (decide()); among non-default candidates tied
// with that pick, the least memory time (the roofline says more than declaration order).
std::optional<std::size_t> pick(std::vector<CandidateReport>& scored, const std::vector<bool>& in,
                                const std::vector<ModelCandidate>& cands, std::size_t default_index,
                                double tie_band) {
  for (std::size_t i = 0; i < scored.size(); ++i)
    scored[i].outcome = in[i] ? Outcome::success() : Outcome{Status::skipped, ""};
  auto winner = decide(scored, default_index, tie_band);
  if (!winner || *winner == default_index) return winner;
  double best = std::numeric_limits<double>::infinity();
  for (const auto& s : scored)
    if (s.outcome.ok()) best = std::min(best, s.score);
  for (const auto& s : scored) {
    if (!s.outcome.ok() || s.score > best * (1 + tie_band)) continue;
    if (memory_seconds(cands[s.index].time) < memory_seconds(cands[*winner].time)) winner = s.index;
  }
  return winner;
}

}  // namespace

EnvelopeSource resolve_envelope(const TunerOptions& options, const DeviceIdentity& device) {
  if (options.model.envelope) return {options.model.envelope, "options"};
  if (!options.model.profile.empty())
    return {read_profile(options.model.profile).envelope, "profile " + options.model.profile};
  if (options.model.profile_dir.empty() || !device.known) return {};
  const std::string path = profile_path(options.model.profile_dir, tunekit::device_digest(device));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  try {
    return {read_profile(path).envelope, "stored profile " + path};
  } catch (const UsageError& e) {
    // A damaged file in the cache is skipped with a warning, never fatal.
    options.hooks.log.warn(std::string(e.what()) + " (ignored)");
    return {};
  }
}

ModelReport model_decide(const OpBase& op, const Key& key, const EnvelopeSource& source,
                         const TunerOptions& options) {
  ModelReport r;
  r.op = op.name();
  r.key = key.text();
  r.numerics_policy = options.decide.numerics_policy;
  r.tie_band = options.decide.tie_band;
  r.envelope = source.envelope;
  r.envelope_origin = source.origin;
  r.default_index = op.default_index(key);
  r.default_name = op.candidate(r.default_index).name;
  r.winner = r.default_index;
  r.winner_name = r.default_name;
  r.source = Source::use_default;

  const bool usable = source.envelope && source.envelope->usable();
  std::optional<Outcome> failure;  // the first classified failure of a work model
  std::string failed_name;
  double floor = std::numeric_limits<double>::infinity();
  const std::size_t n = op.size();
  r.candidates.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Candidate cand = op.candidate(i);
    ModelCandidate c;
    c.index = i;
    c.name = cand.name;
    c.config = cand.config.text();
    c.numerics = cand.numerics;
    c.is_default = i == r.default_index;
    if (auto refused = precheck(cand, key, options.decide.numerics_policy)) c.admission = *refused;
    if (!usable) {
      c.unscored_why = "no usable envelope";
    } else if (!op.has_work_model()) {
      c.unscored_why = "the op declares no work model";
    } else {
      try {
        if (auto w = op.work(key, i)) {
          // The tuner times warm calls unless the op or the options evict between samples.
          w->warm = !(options.measure.evict || op.evicts());
          if (std::string why = invalid_work(*w); !why.empty()) {
            c.unscored_why = std::move(why);
          } else if (const ModelTime t = model_time(*w, *source.envelope);
                     !std::isfinite(t.seconds)) {
            // Degenerate envelope constants (a peak of 1e-300): a score that ranks nothing.
            c.unscored_why = "the model's score is not finite (check the envelope's constants)";
          } else {
            c.scored = true;
            c.time = t;
            floor = std::min(floor, floor_seconds(*w, *source.envelope));
          }
        } else {
          c.unscored_why = "the work model does not score this candidate";
        }
      } catch (...) {
        Outcome o = classify_exception(std::current_exception(), "work model");
        c.unscored_why = "work model failed: " + o.message;
        if (!failure) {
          failure = o;
          failed_name = c.name;
        }
      }
    }
    r.candidates.push_back(std::move(c));
  }
  if (floor < std::numeric_limits<double>::infinity()) r.floor_seconds = floor;

  // The decision rule on model scores (below) applied again and again to what is left: the
  // rank is the order of those picks, so the model's pick is rank 1 and a prune never cuts it.
  std::vector<CandidateReport> scored(n);
  std::vector<bool> in(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    CandidateReport& s = scored[i];
    const ModelCandidate& c = r.candidates[i];
    s.index = i;
    s.name = c.name;
    s.preference = op.candidate(i).preference;
    s.is_default = c.is_default;
    s.score = c.time.seconds;
    // The default is admitted whatever the policy says: it is what the caller declared.
    in[i] = c.scored && (c.admission.ok() || c.is_default);
  }
  std::optional<std::size_t> first;
  for (int rank = 1;; ++rank) {
    const auto next = pick(scored, in, r.candidates, r.default_index, options.decide.tie_band);
    if (!next) break;
    if (!first) first = next;
    r.candidates[*next].rank = rank;
    in[*next] = false;
  }
  const ModelCandidate& def = r.candidates[r.default_index];
  if (def.scored) {
    r.default_seconds = def.time.seconds;
    for (auto& c : r.candidates)
      if (c.scored && c.time.seconds > 0) c.vs_default = def.time.seconds / c.time.seconds;
  }

  auto keep_default = [&](std::string reason) {
    r.reason = std::move(reason);
    r.candidates[r.default_index].chosen = true;
    r.winner_seconds = r.default_seconds;
    return r;
  };
  if (!source.envelope) {
    return keep_default(
        "no device envelope: run 'tunekit calibrate' to store this device's profile, or pass "
        "a profile file");
  }
  if (!usable)
    return keep_default("the envelope from " + source.origin + " lacks constants the model needs");
  if (!op.has_work_model()) return keep_default("the op declares no work model");
  if (failure) {
    return keep_default("a classified failure in the work model of " + failed_name + " (" +
                        std::string(to_string(failure->status)) + ": " + failure->message + ")");
  }
  if (!def.scored) {
    return keep_default(
        "the default is not scored (" + def.unscored_why +
        "): an unscored candidate never beats it, and there is nothing to compare a scored "
        "one with");
  }
  r.winner = first.value_or(r.default_index);
  r.winner_name = r.candidates[r.winner].name;
  r.candidates[r.winner].chosen = true;
  r.source = Source::model;
  r.winner_seconds = r.candidates[r.winner].time.seconds;
  r.speedup = r.winner_seconds > 0 ? r.default_seconds / r.winner_seconds : 1;
  return r;
}

}  // namespace tunekit::detail
