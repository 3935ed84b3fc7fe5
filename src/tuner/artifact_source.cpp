#include "tuner/artifact_source.hpp"

#include "store/stored_choice.hpp"
#include "tunekit/artifact.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {

std::optional<Served> ArtifactSource::find(ServeRequest& request) {
  if (!request.replay || options_.persist.artifact_dir.empty()) return std::nullopt;
  const OpBase& op = request.op;
  auto index = find_artifact_choice(options_.persist.artifact_dir, op, request.key, device_,
                                    options_.hooks.log.warning_sink());
  if (!index || bans_.banned(op.checksum(), request.key.digest(), *index)) return std::nullopt;
  // A candidate an earlier process saw fail live is not served from a deployed file either.
  if (store_ && device_.known &&
      store_bans(*store_, request.identity.digest().hex(), op.candidate(*index).name))
    return std::nullopt;
  if (auto checked = revalidator_.check(op, request.key, *index); checked && !checked->ok()) {
    const std::string why = "the artifact's choice " + op.candidate(*index).name +
                            " failed re-validation: " + std::string(to_string(checked->status)) +
                            ": " + checked->message;
    append_stale(request, why);
    options_.hooks.log.warn(op.name() + " " + request.key.text() + ": " + why + " (in " +
                            options_.persist.artifact_dir + "): not served");
    return std::nullopt;
  }
  request.report = brief_report(op, request.key, device_, options_, *index, Source::artifact_replay,
                                "from " + options_.persist.artifact_dir);
  return Served{*index, Source::artifact_replay, false, true};
}

void ArtifactSource::record(ServeRequest& request, const Served& served) {
  if (options_.decide.mode != Mode::force || options_.persist.artifact_dir.empty()) return;
  if (served.source != Source::searched) return;
  const std::string what = request.op.name() + " " + request.key.text();
  if (!device_.known) {
    throw UsageError("mode force writes an artifact for " + what + " to " +
                     options_.persist.artifact_dir +
                     ", but this device's identity is unknown (an artifact must name the device "
                     "it was measured on): nothing was stored or published");
  }
  if (!served.measured) {
    options_.hooks.log.warn("no artifact written for " + what +
                            ": the search has no clean measurement (" + request.report.reason +
                            ")");
    return;
  }
  const TuneReport& r = request.report;
  try {
    write_artifact(options_.persist.artifact_dir,
                   make_artifact(request.op, request.key, device_, r.winner_name, r.candidates,
                                 search_record(r)));
  } catch (const std::exception& e) {
    throw UsageError(std::string(e.what()) + ": nothing was stored or published for " + what);
  }
}

}  // namespace tunekit::detail
