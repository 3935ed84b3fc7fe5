#include "tuner/model_source.hpp"

namespace tunekit::detail {

std::optional<std::size_t> ModelSource::pick(const OpBase& op, const Key& key, std::string* why) {
  if (!options_.model.serve || options_.decide.mode == Mode::off) return std::nullopt;
  const ModelReport m = model_decide(op, key, envelopes_(), options_);
  if (m.source != Source::model) {
    if (why) *why = "the cost model declined: " + m.reason;
    return std::nullopt;
  }
  // The model's pick has never been run: correct before fast, as for a replayed choice.
  if (m.winner != op.default_index(key)) {
    if (auto checked = revalidator_.check(op, key, m.winner); checked && !checked->ok()) {
      if (why)
        *why = "the cost model's pick " + m.winner_name + " failed validation (" +
               std::string(to_string(checked->status)) + ": " + checked->message + ")";
      return std::nullopt;
    }
  }
  return m.winner;
}

std::optional<Served> ModelSource::find(ServeRequest& request) {
  if (request.search_now || options_.decide.mode != Mode::cached) return std::nullopt;
  // A model that declines, or a pick that fails validation, leaves the default to answer.
  const std::optional<std::size_t> index = pick(request.op, request.key);
  if (!index) return std::nullopt;
  pending_.record_miss(request);  // a guess, not a measurement: tune it later
  request.report = brief_report(request.op, request.key, device_, options_, *index, Source::model,
                                "mode is cached and no choice is known: the cost model's pick "
                                "(nothing measured, nothing stored)");
  return Served{*index, Source::model, false, false};
}

}  // namespace tunekit::detail
