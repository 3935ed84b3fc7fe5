// The cost model in the tuner (src/tuner/model_choice.cpp, tuner.cpp): model_default,
// model_choice and explain; the advisory rules; zero measurement.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>

#include "fakes/fake_device.hpp"
#include "fakes/test_envelope.hpp"
#include "tunekit/calibration.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit {
namespace {

namespace fs = std::filesystem;

Envelope envelope() {
  return testing::test_envelope({});
}

using testing::compute_work;

class ModelDefault : public ::testing::Test {
 protected:
  // An op whose candidates' work is given by `works` (a missing name: unscored).
  std::unique_ptr<Op<fakes::FakeArgs>> make_op(std::vector<std::string> names, std::string def) {
    auto op = fakes::make_fake_op(dev_, names, std::move(def), &inputs_made_);
    op->work([this](const Key&, const Candidate& c) -> std::optional<Work> {
      if (throws_.count(c.name)) throw std::runtime_error("no model for " + c.name);
      auto it = works_.find(c.name);
      if (it == works_.end()) return std::nullopt;
      return it->second;
    });
    return op;
  }
  TunerOptions options() const {
    TunerOptions o;
    o.model.envelope = envelope();
    return o;
  }

  fakes::FakeDevice dev_;
  std::atomic<int> inputs_made_{0};
  std::map<std::string, Work> works_;
  std::set<std::string> throws_;
  Key key_{{"n", 4}};
};

TEST_F(ModelDefault, PicksTheArgminWithZeroMeasurement) {
  works_ = {
      {"def", compute_work(2e-3)}, {"fast", compute_work(1e-3)}, {"slow", compute_work(5e-3)}};
  auto op = make_op({"def", "fast", "slow"}, "def");
  Tuner tuner(dev_, options());
  ModelReport r;
  const Choice c = tuner.model_default(*op, key_, &r);
  EXPECT_EQ(op->candidate(c.index).name, "fast");
  EXPECT_EQ(c.source, Source::model);
  EXPECT_EQ(to_string(r.source), "model");
  EXPECT_DOUBLE_EQ(r.speedup, 2.0);
  EXPECT_EQ(r.candidates[1].rank, 1);
  EXPECT_EQ(r.candidates[0].rank, 2);
  EXPECT_EQ(r.envelope_origin, "options");
  // Nothing ran: no inputs made, no trial, nothing published for select().
  EXPECT_EQ(inputs_made_.load(), 0);
  EXPECT_EQ(dev_.running, "");
  TunerOptions off = options();
  off.decide.mode = Mode::cached;
  Tuner cached(dev_, off);
  cached.model_default(*op, key_);
  EXPECT_EQ(cached.select(*op, key_).source, Source::search_disabled);
}

TEST_F(ModelDefault, AnUnscoredCandidateNeverBeatsTheDefault) {
  works_ = {{"def", compute_work(2e-3)}};  // "mystery" has no model at all
  auto op = make_op({"def", "mystery"}, "def");
  Tuner tuner(dev_, options());
  ModelReport r;
  const Choice c = tuner.model_default(*op, key_, &r);
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.source, Source::model);
  EXPECT_FALSE(r.candidates[1].scored);
  EXPECT_EQ(r.candidates[1].rank, 0);
}

TEST_F(ModelDefault, AnUnscoredDefaultStands) {
  works_ = {{"fast", compute_work(1e-3)}};
  auto op = make_op({"def", "fast"}, "def");
  Tuner tuner(dev_, options());
  ModelReport r;
  const Choice c = tuner.model_default(*op, key_, &r);
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.source, Source::use_default);
  EXPECT_NE(r.reason.find("default is not scored"), std::string::npos) << r.reason;
}

TEST_F(ModelDefault, TiesGoToTheDefault) {
  // Within the 2 % tie band: the default, even though "close" scores lower.
  works_ = {{"close", compute_work(0.99e-3)}, {"def", compute_work(1e-3)}};
  auto op = make_op({"close", "def"}, "def");
  Tuner tuner(dev_, options());
  EXPECT_EQ(tuner.model_default(*op, key_).index, 1u);
  // Outside the band it wins.
  works_["close"] = compute_work(0.9e-3);
  EXPECT_EQ(tuner.model_default(*op, key_).index, 0u);
}

TEST_F(ModelDefault, EqualScoresGoToTheLeastMemoryTime) {
  // "a" and "b" are compute-bound at 1 ms; "b" moves fewer bytes, so it ranks and wins first
  // although "a" is declared earlier (lower preference).
  Work a = compute_work(1e-3), b = compute_work(1e-3);
  a.reread_bytes = 20e6;  // 0.4 ms in cache
  b.reread_bytes = 5e6;   // 0.1 ms in cache
  works_ = {{"def", compute_work(2e-3)}, {"a", a}, {"b", b}};
  auto op = make_op({"def", "a", "b"}, "def");
  Tuner tuner(dev_, options());
  ModelReport r;
  EXPECT_EQ(tuner.model_default(*op, key_, &r).index, 2u);
  EXPECT_EQ(r.candidates[2].rank, 1);
  EXPECT_EQ(r.candidates[1].rank, 2);
  // The default still wins a tie with them.
  works_["def"] = compute_work(1e-3);
  EXPECT_EQ(tuner.model_default(*op, key_).index, 0u);
}

TEST_F(ModelDefault, AnInvalidWorkFieldLeavesTheCandidateUnscored) {
  // Guards like `flops > 0 ? ... : 0` would score a NaN or negative field 0: the best score.
  Work nan = compute_work(1e-3), negative = compute_work(1e-3), threads = compute_work(1e-3);
  nan.flops = std::numeric_limits<double>::quiet_NaN();
  negative.compulsory_bytes = -1e6;
  threads.threads = -2;
  works_ = {
      {"def", compute_work(2e-3)}, {"nan", nan}, {"negative", negative}, {"threads", threads}};
  auto op = make_op({"def", "nan", "negative", "threads"}, "def");
  Tuner tuner(dev_, options());
  ModelReport r;
  const Choice c = tuner.model_default(*op, key_, &r);
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.source, Source::model);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_FALSE(r.candidates[i].scored) << r.candidates[i].name;
    EXPECT_EQ(r.candidates[i].rank, 0);
  }
  EXPECT_NE(r.candidates[1].unscored_why.find("flops"), std::string::npos);
  EXPECT_NE(r.candidates[2].unscored_why.find("compulsory_bytes"), std::string::npos);
  EXPECT_NE(r.candidates[3].unscored_why.find("threads"), std::string::npos);
}

TEST_F(ModelDefault, ADegenerateEnvelopeKeepsTheDefault) {
  // A peak of 1e-300 FLOP/s is positive and finite (usable) but every score is infinite.
  works_ = {{"def", compute_work(2e-3)}, {"fast", compute_work(1e-3)}};
  auto op = make_op({"def", "fast"}, "def");
  TunerOptions o = options();
  o.model.envelope->peak_flops_1.value = 1e-300;
  o.model.envelope->peak_flops_all.value = 1e-300;
  Tuner tuner(dev_, o);
  ModelReport r;
  const Choice c = tuner.model_default(*op, key_, &r);
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.source, Source::use_default);
  EXPECT_EQ(to_string(r.source), "default");
  EXPECT_NE(r.reason.find("not finite"), std::string::npos) << r.reason;
  EXPECT_DOUBLE_EQ(r.speedup, 1.0);
}

TEST_F(ModelDefault, RanksFollowTheDecision) {
  // "a" and "b" tie within the band; "b" scores a hair lower but "a" moves fewer bytes, so the
  // decision picks "a": it is rank 1, whatever a strict sort on the score says.
  Work a = compute_work(1.0e-3), b = compute_work(0.995e-3);
  a.reread_bytes = 5e6;
  b.reread_bytes = 20e6;
  works_ = {{"def", compute_work(5e-3)}, {"b", b}, {"a", a}};
  auto op = make_op({"def", "b", "a"}, "def");
  Tuner tuner(dev_, options());
  ModelReport r;
  EXPECT_EQ(tuner.model_default(*op, key_, &r).index, 2u);
  EXPECT_EQ(r.candidates[2].rank, 1);
  EXPECT_EQ(r.candidates[1].rank, 2);
  EXPECT_EQ(r.candidates[0].rank, 3);
}

TEST_F(ModelDefault, MalformedModelStrategyOptionsAreUsageErrors) {
  TunerOptions o = options();
  for (const char* spec : {"model:top=inf", "model:top=nan", "model:fraction=inf", "model:top=0",
                           "model:top=1.5", "model:top=1e300", "model:floor=inf"}) {
    o.decide.strategy = spec;
    EXPECT_THROW(Tuner(dev_, o), UsageError) << spec;
  }
  // The largest accepted count keeps every scored candidate.
  works_ = {{"def", compute_work(2e-3)}, {"fast", compute_work(1e-3)}};
  auto op = make_op({"def", "fast"}, "def");
  o.decide.strategy = "model:top=1099511627776";
  o.decide.confirm_pairs = 0;
  dev_.behaviour["def"].seconds = 2e-3;
  dev_.behaviour["fast"].seconds = 1e-3;
  Tuner tuner(dev_, o);
  const TuneReport r = tuner.tune(*op, key_);
  EXPECT_EQ(r.winner_name, "fast");
  ASSERT_NE(r.find(1), nullptr);
  EXPECT_EQ(r.find(1)->outcome.status, Status::ok);
}

TEST_F(ModelDefault, MissingEnvelopeGivesTheDefaultAndSaysSo) {
  works_ = {{"def", compute_work(2e-3)}, {"fast", compute_work(1e-3)}};
  auto op = make_op({"def", "fast"}, "def");
  Tuner tuner(dev_, TunerOptions{});
  ModelReport r;
  const Choice c = tuner.model_default(*op, key_, &r);
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.source, Source::use_default);
  EXPECT_EQ(to_string(r.source), "default");
  EXPECT_NE(r.reason.find("tunekit calibrate"), std::string::npos) << r.reason;
  EXPECT_FALSE(r.candidates[1].scored);
}

TEST_F(ModelDefault, AClassifiedFailureGivesTheDefault) {
  works_ = {{"def", compute_work(2e-3)}, {"fast", compute_work(1e-3)}};
  throws_ = {"broken"};
  auto op = make_op({"def", "fast", "broken"}, "def");
  Tuner tuner(dev_, options());
  ModelReport r;
  const Choice c = tuner.model_default(*op, key_, &r);
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.source, Source::use_default);
  EXPECT_NE(r.reason.find("broken"), std::string::npos) << r.reason;
  EXPECT_NE(r.candidates[2].unscored_why.find("no model for broken"), std::string::npos);
}

TEST_F(ModelDefault, AnOpWithoutAWorkModelKeepsTheDefault) {
  auto op = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  Tuner tuner(dev_, options());
  ModelReport r;
  EXPECT_EQ(tuner.model_default(*op, key_, &r).source, Source::use_default);
  EXPECT_NE(r.reason.find("no work model"), std::string::npos);
}

TEST_F(ModelDefault, TheNumericsPolicyAndEligibilityAreHonoured) {
  works_ = {{"def", compute_work(2e-3)},
            {"approx", compute_work(0.5e-3)},
            {"picky", compute_work(0.4e-3)},
            {"ok", compute_work(1e-3)}};
  auto op = std::make_unique<Op<fakes::FakeArgs>>("mixed", 1);
  auto noop = [](fakes::FakeArgs&) {};
  Candidate approx;
  approx.name = "approx";
  approx.numerics = Numerics::approximate;
  Candidate picky;
  picky.name = "picky";
  picky.eligible = [](const Key&) -> std::optional<std::string> { return "n too small"; };
  op->candidate("def", noop).candidate(approx, noop).candidate(picky, noop).candidate("ok", noop);
  op->default_candidate("def");
  op->work(
      [this](const Key&, const Candidate& c) -> std::optional<Work> { return works_[c.name]; });
  Tuner tuner(dev_, options());  // policy: reassociates
  ModelReport r;
  EXPECT_EQ(op->candidate(tuner.model_default(*op, key_, &r).index).name, "ok");
  EXPECT_EQ(r.candidates[1].admission.status, Status::skipped);
  EXPECT_EQ(r.candidates[2].admission.status, Status::rejected);
  EXPECT_EQ(r.candidates[2].admission.message, "n too small");
  EXPECT_TRUE(r.candidates[1].scored);  // scored, shown, but not admitted
  EXPECT_EQ(r.candidates[1].rank, 0);
}

TEST_F(ModelDefault, ModelChoiceJudgesForAnotherEnvelope) {
  // "blocked" re-reads a 4 MiB block: DRAM on a 1 MiB cache, cache on a 8 MiB one.
  Work def = compute_work(3e-3);
  Work blocked;
  blocked.flops = 1e6;
  blocked.reread_bytes = 50e6;  // 5 ms at DRAM, 1 ms in cache
  blocked.working_set_bytes = 4 << 20;
  works_ = {{"def", def}, {"blocked", blocked}};
  auto op = make_op({"def", "blocked"}, "def");
  Tuner tuner(dev_, options());
  EXPECT_EQ(tuner.model_default(*op, key_).index, 0u);
  Envelope big = envelope();
  big.cache_bytes = {8 << 20, 0};
  ModelReport r;
  EXPECT_EQ(tuner.model_choice(*op, key_, big, &r).index, 1u);
  EXPECT_EQ(r.envelope_origin, "given");
  EXPECT_EQ(inputs_made_.load(), 0);
}

TEST_F(ModelDefault, TheChecksumIgnoresTheWorkModel) {
  auto plain = fakes::make_fake_op(dev_, {"def", "fast"}, "def");
  auto modelled = make_op({"def", "fast"}, "def");
  EXPECT_EQ(plain->checksum(), modelled->checksum());
}

TEST_F(ModelDefault, ExplainShowsStoredMeasurements) {
  const fs::path dir = fs::temp_directory_path() / ("tunekit-explain-" + std::to_string(getpid()));
  fs::remove_all(dir);
  dev_.behaviour["def"].seconds = 2e-3;
  dev_.behaviour["fast"].seconds = 1e-3;
  works_ = {{"def", compute_work(2e-3)}, {"fast", compute_work(1e-3)}};
  auto op = make_op({"def", "fast"}, "def");
  TunerOptions o = options();
  o.persist.store = "sqlite:" + (dir / "choices.db").string();
  o.decide.confirm_pairs = 0;
  Tuner tuner(dev_, o);
  ModelReport before = tuner.explain(*op, key_);
  EXPECT_TRUE(before.measured_from.empty());
  EXPECT_FALSE(before.candidates[1].measured_seconds);
  tuner.tune(*op, key_);
  const ModelReport r = tuner.explain(*op, key_);
  EXPECT_NE(r.measured_from.find("choices.db"), std::string::npos);
  ASSERT_TRUE(r.candidates[0].measured_seconds);
  ASSERT_TRUE(r.candidates[1].measured_seconds);
  EXPECT_DOUBLE_EQ(*r.candidates[1].measured_seconds, 1e-3);
  EXPECT_EQ(r.candidates[1].measured_status, "ok");
  EXPECT_TRUE(r.candidates[1].admission.ok());
  EXPECT_EQ(r.winner_name, "fast");
  const std::string json_text = to_json(r);
  EXPECT_NE(json_text.find("\"measured_seconds\""), std::string::npos);
  fs::remove_all(dir);
}

TEST_F(ModelDefault, TheStoredProfileOfTheDeviceIsFound) {
  const fs::path dir = fs::temp_directory_path() / ("tunekit-profiles-" + std::to_string(getpid()));
  fs::remove_all(dir);
  DeviceProfile p;
  p.envelope = envelope();
  p.device_digest = device_digest(dev_.identity());
  write_profile(profile_path(dir.string(), p.device_digest), p);
  works_ = {{"def", compute_work(2e-3)}, {"fast", compute_work(1e-3)}};
  auto op = make_op({"def", "fast"}, "def");
  TunerOptions o;
  o.model.profile_dir = dir.string();
  Tuner tuner(dev_, o);
  ModelReport r;
  EXPECT_EQ(tuner.model_default(*op, key_, &r).index, 1u);
  EXPECT_NE(r.envelope_origin.find("stored profile"), std::string::npos);
  // A damaged stored profile is a warning, and the default stands.
  std::ofstream(profile_path(dir.string(), p.device_digest)) << "{oops";
  std::string warned;
  o.hooks.log = Log::warnings_to([&](std::string_view m) { warned = m; });
  Tuner again(dev_, o);
  EXPECT_EQ(again.model_default(*op, key_).source, Source::use_default);
  EXPECT_NE(warned.find(".json"), std::string::npos) << warned;
  // A profile named explicitly that is broken is misuse: an error at construction.
  TunerOptions named;
  named.model.profile = profile_path(dir.string(), p.device_digest);
  EXPECT_THROW(Tuner(dev_, named), UsageError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tunekit
