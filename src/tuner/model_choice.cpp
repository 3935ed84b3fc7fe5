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

}  // namespace

EnvelopeSource resolve_envelope(const TunerOptions& options, const DeviceIdentity& device) {
  if (options.envelope) return {options.envelope, "options"};
  if (!options.profile.empty())
    return {read_profile(options.profile).envelope, "profile " + options.profile};
  if (options.profile_dir.empty() || !device.known) return {};
  const std::string path = profile_path(options.profile_dir, tunekit::device_digest(device));
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  try {
    return {read_profile(path).envelope, "stored profile " + path};
  } catch (const UsageError& e) {
    // A damaged file in the cache is skipped with a warning, never fatal.
    if (options.on_warning)
      options.on_warning(std::string("tunekit: warning: ") + e.what() + " (ignored)");
    return {};
  }
}

ModelReport model_decide(const OpBase& op, const Key& key, const EnvelopeSource& source,
                         const TunerOptions& options) {
  ModelReport r;
  r.op = op.name();
  r.key = key.text();
  r.numerics_policy = options.numerics_policy;
  r.tie_band = options.tie_band;
  r.envelope = source.envelope;
  r.envelope_origin = source.origin;
  r.default_index = op.default_index(key);
  r.default_name = op.candidates()[r.default_index].name;
  r.winner = r.default_index;
  r.winner_name = r.default_name;
  r.source = Source::use_default;

  const bool usable = source.envelope && source.envelope->usable();
  std::optional<Outcome> failure;  // the first classified failure of a work model
  std::string failed_name;
  double floor = std::numeric_limits<double>::infinity();
  const auto& cs = op.candidates();
  for (std::size_t i = 0; i < cs.size(); ++i) {
    ModelCandidate c;
    c.index = i;
    c.name = cs[i].name;
    c.config = cs[i].config.text();
    c.numerics = cs[i].numerics;
    c.is_default = i == r.default_index;
    if (auto refused = precheck(cs[i], key, options.numerics_policy)) c.admission = *refused;
    if (!usable) {
      c.unscored_why = "no usable envelope";
    } else if (!op.has_work_model()) {
      c.unscored_why = "the op declares no work model";
    } else {
      try {
        if (auto w = op.work(key, i)) {
          // The tuner times warm calls unless the op or the options evict between samples.
          w->warm = !(options.evict || op.evicts());
          c.scored = true;
          c.time = model_time(*w, *source.envelope);
          floor = std::min(floor, floor_seconds(*w, *source.envelope));
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

  // Ranks among admitted, scored candidates.
  std::vector<ModelCandidate*> ranked;
  for (auto& c : r.candidates)
    if (c.scored && c.admission.ok()) ranked.push_back(&c);
  // Equal scores (the same roofline bound) are ordered by memory time: the candidate that
  // moves fewer bytes for the same bound has the more headroom.
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const ModelCandidate* a, const ModelCandidate* b) {
                     return std::pair(a->time.seconds, memory_seconds(a->time)) <
                            std::pair(b->time.seconds, memory_seconds(b->time));
                   });
  for (std::size_t k = 0; k < ranked.size(); ++k) ranked[k]->rank = static_cast<int>(k + 1);
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
        "the default is not scored: an unscored candidate never beats it, and there is "
        "nothing to compare a scored one with");
  }
  // The tuner's decision rule on model scores: tie band, default first, then preference.
  std::vector<CandidateReport> scored(cs.size());
  for (std::size_t i = 0; i < cs.size(); ++i) {
    CandidateReport& s = scored[i];
    const ModelCandidate& c = r.candidates[i];
    s.index = i;
    s.name = c.name;
    s.preference = cs[i].preference;
    s.is_default = c.is_default;
    // The default is admitted whatever the policy says: it is what the caller declared.
    const bool admitted = c.admission.ok() || c.is_default;
    s.outcome = admitted && c.scored ? Outcome::success() : Outcome{Status::skipped, ""};
    s.score = c.time.seconds;
  }
  const auto winner = decide(scored, r.default_index, options.tie_band);
  r.winner = winner.value_or(r.default_index);
  if (r.winner != r.default_index) {
    // decide() broke a tie among non-default candidates by preference; on model scores the
    // roofline says more: among those tied with the winner, the least memory time.
    double best = std::numeric_limits<double>::infinity();
    for (const auto& s : scored)
      if (s.outcome.ok()) best = std::min(best, s.score);
    for (const auto& s : scored) {
      if (!s.outcome.ok() || s.score > best * (1 + options.tie_band)) continue;
      if (memory_seconds(r.candidates[s.index].time) < memory_seconds(r.candidates[r.winner].time))
        r.winner = s.index;
    }
  }
  r.winner_name = cs[r.winner].name;
  r.candidates[r.winner].chosen = true;
  r.source = Source::model;
  r.winner_seconds = r.candidates[r.winner].time.seconds;
  r.speedup = r.winner_seconds > 0 ? r.default_seconds / r.winner_seconds : 1;
  return r;
}

std::size_t prune_keep(std::string_view spec, std::size_t ranked) {
  if (spec.empty()) return ranked;
  auto bad = [&]() -> UsageError {
    return UsageError("model_prune: use top:K (K >= 1) or fraction:F (0 < F <= 1), not '" +
                      std::string(spec) + "'");
  };
  const auto colon = spec.find(':');
  if (colon == spec.npos) throw bad();
  const std::string name(spec.substr(0, colon)), value(spec.substr(colon + 1));
  char* end = nullptr;
  const double x = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(x)) throw bad();
  if (name == "top") {
    if (x < 1 || x != std::floor(x)) throw bad();
    return std::min(ranked, static_cast<std::size_t>(x));
  }
  if (name == "fraction") {
    if (!(x > 0 && x <= 1)) throw bad();
    const auto keep = static_cast<std::size_t>(std::ceil(x * static_cast<double>(ranked)));
    return std::min(ranked, std::max<std::size_t>(1, keep));
  }
  throw bad();
}

}  // namespace tunekit::detail
