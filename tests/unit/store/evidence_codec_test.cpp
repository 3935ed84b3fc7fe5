// Tests src/store/evidence_codec.cpp: evidence and identity parts to JSON and back.
#include "store/evidence_codec.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tunekit::detail {
namespace {

// Every field set to a value that is not its default, so a field the codec drops shows.
TimingResult full_timing() {
  TimingResult t;
  t.outcome = Outcome{Status::timed_out, "window too long"};
  t.mode = TimingMode::queued;
  t.clock = "opencl_events";
  t.samples = {3e-6, 1e-6, 2e-6};
  t.min = 1e-6;
  t.median = 2e-6;
  t.mean = 2.5e-6;
  t.mad = 0.5e-6;
  t.p10 = 1.1e-6;
  t.p90 = 2.9e-6;
  t.depth = 8;
  t.dispatches = 4096;
  t.stalled_fraction = 0.25;
  t.contended = true;
  t.retaken = 1;
  t.waited = 2;
  t.clean = 5;
  t.wall_seconds = 0.125;
  return t;
}

CandidateReport full_candidate() {
  CandidateReport c;
  c.index = 7;
  c.name = "blocked_4x16";
  c.config = "mc=64,order=ikj";
  c.numerics = Numerics::reassociates;
  c.group = 2;
  c.preference = -3;
  c.is_default = true;
  c.winner = true;
  c.outcome = Outcome{Status::validation_failed, "element 3 differs"};
  c.timing = full_timing();
  c.retries = 2;
  c.score = 2e-6;
  c.vs_default = 1.5;
  c.compile_seconds = 0.75;
  c.checked = true;
  return c;
}

SearchRecord full_search() {
  SearchRecord s;
  s.strategy = "genetic:pop=20";
  s.schedule = "racing:round=4";
  s.seed = 0xfeedfacecafebeefULL;
  s.space_size = 120;
  s.distinct_points = 40;
  s.evaluated = 17;
  s.stop_reason = "time budget";
  s.budget = BudgetReport{90, 40, true, "3 points", 1.5, 5};
  return s;
}

void expect_same_timing(const TimingResult& a, const TimingResult& b) {
  EXPECT_EQ(a.outcome.status, b.outcome.status);
  EXPECT_EQ(a.outcome.message, b.outcome.message);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.clock, b.clock);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_DOUBLE_EQ(a.min, b.min);
  EXPECT_DOUBLE_EQ(a.median, b.median);
  EXPECT_DOUBLE_EQ(a.mean, b.mean);
  EXPECT_DOUBLE_EQ(a.mad, b.mad);
  EXPECT_DOUBLE_EQ(a.p10, b.p10);
  EXPECT_DOUBLE_EQ(a.p90, b.p90);
  EXPECT_EQ(a.depth, b.depth);
  EXPECT_EQ(a.dispatches, b.dispatches);
  EXPECT_DOUBLE_EQ(a.stalled_fraction, b.stalled_fraction);
  EXPECT_EQ(a.contended, b.contended);
  EXPECT_EQ(a.retaken, b.retaken);
  EXPECT_EQ(a.waited, b.waited);
  EXPECT_EQ(a.clean, b.clean);
  EXPECT_DOUBLE_EQ(a.wall_seconds, b.wall_seconds);
}

void expect_same_candidate(const CandidateReport& a, const CandidateReport& b) {
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.numerics, b.numerics);
  EXPECT_EQ(a.group, b.group);
  EXPECT_EQ(a.preference, b.preference);
  EXPECT_EQ(a.is_default, b.is_default);
  EXPECT_EQ(a.winner, b.winner);
  EXPECT_EQ(a.outcome.status, b.outcome.status);
  EXPECT_EQ(a.outcome.message, b.outcome.message);
  EXPECT_EQ(a.retries, b.retries);
  EXPECT_DOUBLE_EQ(a.score, b.score);
  EXPECT_DOUBLE_EQ(a.vs_default, b.vs_default);
  EXPECT_DOUBLE_EQ(a.compile_seconds, b.compile_seconds);
  EXPECT_EQ(a.checked, b.checked);
  ASSERT_EQ(a.timing.has_value(), b.timing.has_value());
  if (a.timing) expect_same_timing(*a.timing, *b.timing);
}

TEST(EvidenceCodec, EveryCandidateFieldRoundTrips) {
  CandidateReport untimed;
  untimed.index = 1;
  untimed.name = "naive";
  untimed.outcome = Outcome{Status::compile_failed, "no such intrinsic"};
  const std::vector<CandidateReport> evidence{full_candidate(), untimed};
  const DecodedEvidence back = evidence_from_text(evidence_text(evidence, std::nullopt));
  EXPECT_TRUE(back.readable);
  EXPECT_FALSE(back.search.has_value());
  ASSERT_EQ(back.candidates.size(), 2u);
  expect_same_candidate(back.candidates[0], evidence[0]);
  expect_same_candidate(back.candidates[1], evidence[1]);
  EXPECT_FALSE(back.candidates[1].timing.has_value());
}

TEST(EvidenceCodec, TheSearchRecordRoundTrips) {
  const SearchRecord s = full_search();
  const DecodedEvidence back = evidence_from_text(evidence_text({full_candidate()}, s));
  ASSERT_TRUE(back.search.has_value());
  EXPECT_EQ(back.search->strategy, s.strategy);
  EXPECT_EQ(back.search->schedule, s.schedule);
  EXPECT_EQ(back.search->seed, s.seed);
  EXPECT_EQ(back.search->space_size, s.space_size);
  EXPECT_EQ(back.search->distinct_points, 40u);
  EXPECT_EQ(back.search->evaluated, s.evaluated);
  EXPECT_EQ(back.search->stop_reason, s.stop_reason);
  EXPECT_DOUBLE_EQ(back.search->budget.seconds, 90);
  EXPECT_EQ(back.search->budget.evaluations, 40u);
  EXPECT_TRUE(back.search->budget.cut);
  EXPECT_EQ(back.search->budget.stopped, "3 points");
  EXPECT_DOUBLE_EQ(back.search->budget.reserve_seconds, 1.5);
  EXPECT_EQ(back.search->budget.not_started, 5u);
  ASSERT_EQ(back.candidates.size(), 1u);
  expect_same_candidate(back.candidates[0], full_candidate());
}

// Where the host ran the CPUs around the search round-trips; an older entry (none), a device
// that could not tell, and damaged values (NaN, negative, absurd, one side only) read as
// unmeasured.
TEST(EvidenceCodec, TheCpuPlacementRoundTripsAndDamagedValuesReadAsUnmeasured) {
  SearchRecord s = full_search();
  s.cpu_placement = {58.5, 341.25};
  const CodecJson j = search_json(s);
  const SearchRecord back = search_from_json(j);
  EXPECT_DOUBLE_EQ(back.cpu_placement.before_ns, 58.5);
  EXPECT_DOUBLE_EQ(back.cpu_placement.after_ns, 341.25);
  EXPECT_TRUE(back.cpu_placement.changed());

  EXPECT_FALSE(search_json(full_search()).contains("cpu_placement"));  // unmeasured: absent
  EXPECT_FALSE(search_from_json(search_json(full_search())).cpu_placement.measured());
  for (const CodecJson& damaged :
       {CodecJson{{"before_ns", std::nan("")}, {"after_ns", 60}},
        CodecJson{{"before_ns", -5}, {"after_ns", 60}},
        CodecJson{{"before_ns", 1e300}, {"after_ns", 60}}, CodecJson{{"before_ns", 60}},
        CodecJson{{"before_ns", "fast"}, {"after_ns", 60}}, CodecJson("far")}) {
    CodecJson e = j;
    e["cpu_placement"] = damaged;
    const CpuPlacement p = search_from_json(e).cpu_placement;
    EXPECT_FALSE(p.measured()) << damaged.dump();
    EXPECT_DOUBLE_EQ(p.before_ns, 0) << damaged.dump();
    EXPECT_DOUBLE_EQ(p.after_ns, 0) << damaged.dump();
  }
}

// What the search's watch of the placement saw (PlacementGuard) round-trips; absent when
// nothing was waited; damaged counts and seconds read as 0.
TEST(EvidenceCodec, ThePlacementWaitsRoundTripAndDamagedOnesReadAsNone) {
  SearchRecord s = full_search();
  s.cpu_placement = {.before_ns = 60,
                     .after_ns = 58,
                     .lowest_ns = 52.5,
                     .waits = 2,
                     .waited_seconds = 0.25,
                     .ran_far = 1};
  const CodecJson j = search_json(s);
  const CpuPlacement back = search_from_json(j).cpu_placement;
  EXPECT_DOUBLE_EQ(back.lowest_ns, 52.5);
  EXPECT_EQ(back.waits, 2);
  EXPECT_DOUBLE_EQ(back.waited_seconds, 0.25);
  EXPECT_EQ(back.ran_far, 1);
  EXPECT_TRUE(back.mixed());

  SearchRecord quiet = full_search();
  quiet.cpu_placement = {.before_ns = 60, .after_ns = 58};
  EXPECT_FALSE(search_json(quiet)["cpu_placement"].contains("waits"));
  for (const CodecJson& bad : {CodecJson(std::nan("")), CodecJson(-3), CodecJson(1e300),
                               CodecJson(2.5), CodecJson("many")}) {
    CodecJson e = j;
    e["cpu_placement"]["waits"] = bad;
    e["cpu_placement"]["ran_far"] = bad;
    e["cpu_placement"]["waited_seconds"] = bad;
    const CpuPlacement p = search_from_json(e).cpu_placement;
    EXPECT_TRUE(p.measured()) << bad.dump();
    EXPECT_EQ(p.waits, 0) << bad.dump();
    EXPECT_EQ(p.ran_far, 0) << bad.dump();
    EXPECT_TRUE(p.waited_seconds == 0 || p.waited_seconds == 2.5) << bad.dump();
  }
}

// The decision's confidence with what the final pairings measured; an entry written before
// the tie pairing's fields, and damaged values, read as "not measured".
TEST(EvidenceCodec, TheConfidenceRoundTripsAndADamagedTieRatioReadsAsUnmeasured) {
  SearchRecord s = full_search();
  DecisionConfidence d;
  d.runner_up = "b";
  d.advantage = 0.995;
  d.advantage_low = 0.98;
  d.verdict = "kept by the tie order (the pairs put the runner-up less than half the band ahead)";
  d.anchor = "lib";
  d.anchor_paired_ratio = 0.5;
  d.tie_rival = "b";
  d.tie_paired_ratio = 1.004;
  s.confidence = d;
  const DecodedEvidence back = evidence_from_text(evidence_text({}, s));
  ASSERT_TRUE(back.search && back.search->confidence);
  EXPECT_EQ(back.search->confidence->tie_rival, "b");
  EXPECT_DOUBLE_EQ(back.search->confidence->tie_paired_ratio, 1.004);
  EXPECT_EQ(back.search->confidence->verdict, d.verdict);
  EXPECT_DOUBLE_EQ(back.search->confidence->anchor_paired_ratio, 0.5);
  s.confidence->tie_rival.clear();  // not paired: the keys are not written
  EXPECT_FALSE(evidence_json({}, s).at("search").at("confidence").contains("tie_rival"));
  auto with_ratio = [](const std::string& ratio) {
    return evidence_from_text(std::string(R"({"search": {"confidence": {"runner_up": "b",
        "tie_rival": "b", "tie_paired_ratio": )") +
                              ratio + "}}, \"candidates\": []}");
  };
  for (const char* ratio : {"-1", "\"1.004\"", "null", "[]"}) {
    const DecodedEvidence damaged = with_ratio(ratio);
    ASSERT_TRUE(damaged.search && damaged.search->confidence) << ratio;
    EXPECT_EQ(damaged.search->confidence->tie_paired_ratio, 0) << ratio;
  }
  // A number past a double's range is no JSON the parser takes: the evidence is unreadable
  // as a whole (the store's rule for text it cannot read), never an infinite ratio.
  EXPECT_FALSE(with_ratio("1e999").readable);
  const DecodedEvidence old = evidence_from_text(
      R"({"search": {"confidence": {"runner_up": "b", "advantage": 1.5}}, "candidates": []})");
  ASSERT_TRUE(old.search && old.search->confidence);
  EXPECT_EQ(old.search->confidence->tie_rival, "");
  EXPECT_EQ(old.search->confidence->tie_paired_ratio, 0);
}

TEST(EvidenceCodec, TheFinalRaceRoundTripsAndDamagedValuesReadAsUnknown) {
  SearchRecord s = full_search();
  EXPECT_FALSE(evidence_json({}, s).at("search").contains("final_race"));  // none: not written
  s.final_race = {.finalists = 3, .seconds = 0.25, .search_pick = "b", .note = ""};
  CandidateReport a;
  a.name = "a";
  a.outcome = Outcome::success();
  a.score = 1e-3;
  a.finalist = true;
  a.search_score = 1.2e-3;
  CandidateReport b;
  b.name = "b";
  b.outcome = Outcome::success();
  b.score = 1.1e-3;
  EXPECT_FALSE(candidate_json(b).contains("finalist"));  // not a finalist: the format unchanged
  const DecodedEvidence back = evidence_from_text(evidence_text({a, b}, s));
  ASSERT_TRUE(back.search);
  EXPECT_EQ(back.search->final_race.finalists, 3u);
  EXPECT_DOUBLE_EQ(back.search->final_race.seconds, 0.25);
  EXPECT_EQ(back.search->final_race.search_pick, "b");
  ASSERT_EQ(back.candidates.size(), 2u);
  EXPECT_TRUE(back.candidates[0].finalist);
  EXPECT_DOUBLE_EQ(back.candidates[0].search_score, 1.2e-3);
  EXPECT_FALSE(back.candidates[1].finalist);
  EXPECT_EQ(back.candidates[1].search_score, 0);
  for (const char* value : {"-1", "\"0.2\"", "null", "[]"}) {
    const DecodedEvidence damaged = evidence_from_text(
        std::string(R"({"search": {"final_race": {"finalists": 2, "seconds": )") + value +
        R"(}}, "candidates": [{"name": "a", "finalist": true, "search_score": )" + value + "}]}");
    ASSERT_TRUE(damaged.search) << value;
    EXPECT_EQ(damaged.search->final_race.seconds, 0) << value;
    ASSERT_EQ(damaged.candidates.size(), 1u) << value;
    EXPECT_EQ(damaged.candidates[0].search_score, 0) << value;
  }
  const DecodedEvidence old =
      evidence_from_text(R"({"search": {}, "candidates": [{"name": "a"}]})");
  ASSERT_TRUE(old.search);
  EXPECT_EQ(old.search->final_race.finalists, 0u);
  EXPECT_FALSE(old.candidates.at(0).finalist);
}

TEST(EvidenceCodec, ABucketedEntrysBucketRoundTripsAndIsAbsentForAnExactKey) {
  SearchRecord s = full_search();
  EXPECT_FALSE(evidence_json({}, s).at("search").contains("bucket"));  // the format unchanged
  EXPECT_EQ(evidence_from_text(evidence_text({}, s)).search->bucket, "");
  s.bucket = "n: 65..128 (pow2)";
  EXPECT_EQ(evidence_json({}, s).at("search").at("bucket"), "n: 65..128 (pow2)");
  EXPECT_EQ(evidence_from_text(evidence_text({}, s)).search->bucket, "n: 65..128 (pow2)");
}

TEST(EvidenceCodec, TheStoredShapeIsKept) {
  // The store's file format: {"search", "candidates"} with a search, else a bare array.
  const CodecJson with = evidence_json({full_candidate()}, full_search());
  ASSERT_TRUE(with.is_object());
  EXPECT_EQ(with.at("search").at("strategy"), "genetic:pop=20");
  EXPECT_EQ(with.at("candidates").at(0).at("params").at("mc"), 64);
  EXPECT_TRUE(evidence_json({}, std::nullopt).is_array());
}

TEST(EvidenceCodec, MissingFieldsTakeTheirDefaults) {
  // An entry written before most fields existed: a name and a status only.
  const DecodedEvidence old =
      evidence_from_text(R"([{"name": "a", "status": "ok", "timing": {"samples": [1e-6]}},
                             {"name": "b", "score": "not a number"}, 3])");
  EXPECT_TRUE(old.readable);
  ASSERT_EQ(old.candidates.size(), 2u) << "what is not an object is skipped";
  EXPECT_EQ(old.candidates[0].index, 0u) << "the index defaults to the position";
  EXPECT_EQ(old.candidates[1].index, 1u);
  EXPECT_EQ(old.candidates[0].outcome.status, Status::ok);
  EXPECT_EQ(old.candidates[1].outcome.status, Status::skipped);
  EXPECT_DOUBLE_EQ(old.candidates[1].score, 0) << "a mistyped field keeps its default";
  EXPECT_DOUBLE_EQ(old.candidates[0].compile_seconds, 0);
  // Written when every candidate measured ok had been checked.
  EXPECT_TRUE(old.candidates[0].checked);
  EXPECT_FALSE(old.candidates[1].checked);
  ASSERT_TRUE(old.candidates[0].timing.has_value());
  EXPECT_EQ(old.candidates[0].timing->samples.size(), 1u);
  EXPECT_EQ(old.candidates[0].timing->depth, 1);
  EXPECT_EQ(old.candidates[0].timing->mode, TimingMode::isolated);
}

TEST(EvidenceCodec, TextThatIsNoEvidenceDecodesToNothing) {
  EXPECT_TRUE(evidence_from_text("").readable) << "no evidence stored is not damage";
  EXPECT_TRUE(evidence_from_text("").candidates.empty());
  for (const char* damaged : {"{not json", R"({"search": {}})", "42", R"({"candidates": 1})"}) {
    const DecodedEvidence d = evidence_from_text(damaged);
    EXPECT_FALSE(d.readable) << damaged;
    EXPECT_TRUE(d.candidates.empty()) << damaged;
    EXPECT_FALSE(d.search.has_value()) << damaged;
  }
}

TEST(EvidenceCodec, IdentityPartsRoundTrip) {
  DeviceIdentity d;
  d.backend = "opencl";
  d.vendor = "ACME";
  d.product = "Widget 9";
  d.architecture = "gfx90a";
  d.features = {"fp64", "subgroups"};
  d.compute_units = 104;
  d.memory_bytes = std::uint64_t{64} << 30;
  d.l1d_bytes = 16384;
  d.l2_bytes = 8 << 20;
  d.l3_bytes = std::uint64_t{256} << 20;
  d.driver = "rocm 6.1";
  const DeviceIdentity back = device_from_text(device_json(d));
  EXPECT_EQ(device_json(back), device_json(d));
  EXPECT_TRUE(back.known) << "a stored device that names a product is known";
  EXPECT_EQ(back.features, d.features);
  EXPECT_EQ(back.memory_bytes, d.memory_bytes);

  const Toolchain t{"0.3.0", "gcc 12.2.0", {"hwloc 2.9.0", "pocl 5.0"}};
  const Toolchain t_back = toolchain_from_text(toolchain_json(t));
  EXPECT_EQ(t_back.tunekit_version, t.tunekit_version);
  EXPECT_EQ(t_back.compiler, t.compiler);
  EXPECT_EQ(t_back.runtimes, t.runtimes);

  const EnvironmentTags tags{{"load", "idle"}, {"power", "ac"}};
  EXPECT_EQ(environment_from_text(environment_json(tags)), tags);
}

TEST(EvidenceCodec, DamagedIdentityPartsDecodeToDefaults) {
  EXPECT_FALSE(device_from_text("not json").known);
  EXPECT_EQ(device_from_text(R"({"product": "x"})").product, "x") << "missing fields default";
  EXPECT_EQ(device_from_text(R"({"product": "x", "compute_units": "many"})").compute_units, 0);
  EXPECT_TRUE(toolchain_from_text("[1]").runtimes.empty());
  EXPECT_TRUE(environment_from_text("[1,2]").empty());
  // A tag that is not a string keeps its JSON text rather than being dropped.
  EXPECT_EQ(environment_from_text(R"({"cores": 4})").at("cores"), "4");
}

TEST(EvidenceCodec, AStackScopeRoundTripsAndOldEvidenceIsAKernelChoice) {
  const std::vector<CandidateReport> none;
  const DecodedEvidence graph = evidence_from_text(evidence_text(none, std::nullopt, "graph"));
  EXPECT_TRUE(graph.readable);
  EXPECT_EQ(graph.scope, "graph");
  // A kernel choice keeps the form it always had (a bare array without a search record).
  EXPECT_EQ(evidence_text(none, std::nullopt), "[]");
  EXPECT_EQ(evidence_from_text("[]").scope, "kernel");
  EXPECT_EQ(evidence_from_text(R"({"candidates": []})").scope, "kernel");
}

}  // namespace
}  // namespace tunekit::detail
