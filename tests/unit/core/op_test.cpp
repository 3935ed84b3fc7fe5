// Tests for src/core/op.cpp and include/tunekit/op.hpp: key schema checks, shapes, the
// candidate-set checksum (and what "correct" means in it), input sets, restored inputs,
// validation hooks, in-process and re-validation opt-outs, bucketed keys.
#include "tunekit/op.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "tunekit/errors.hpp"
#include "tunekit/validate.hpp"

namespace tunekit {
namespace {

struct OpTestArgs {
  std::vector<float> x;
};

std::unique_ptr<Op<OpTestArgs>> make(std::string second = "b", int version = 1) {
  auto made = std::make_unique<Op<OpTestArgs>>("demo", 1);
  Op<OpTestArgs>& op = *made;
  op.key_field({"n", Value::Type::integer, "length", std::nullopt, 1, 1000})
      .key_field({"dtype", Value::Type::string, "element type", Value("f32")});
  Candidate a;
  a.name = "a";
  Candidate b;
  b.name = std::move(second);
  b.version = version;
  b.config = Config{{"vec", 8}};
  op.candidate(a, [](OpTestArgs&) {}).candidate(b, [](OpTestArgs&) {}).default_candidate("a");
  return made;
}

TEST(Op, ParseShapeFillsDefaultsAndOrders) {
  auto op_ptr = make();
  auto& op = *op_ptr;
  Key k = op.parse_shape("n=10");
  EXPECT_EQ(k.text(), "n=10,dtype=f32");
  EXPECT_EQ(op.parse_shape("dtype=f64,n=3").text(), "n=3,dtype=f64");
}

TEST(Op, HostileAndWrongShapesAreClearErrors) {
  auto op_ptr = make();
  auto& op = *op_ptr;
  EXPECT_THROW(op.parse_shape("n=0"), UsageError);
  EXPECT_THROW(op.parse_shape("n=1000000000000"), UsageError);
  EXPECT_THROW(op.parse_shape("n=abc"), UsageError);
  EXPECT_THROW(op.parse_shape("n=1,zz=2"), UsageError);
  EXPECT_THROW(op.parse_shape("dtype=f32"), UsageError);  // n is required
  EXPECT_THROW(op.parse_shape("n=1,,"), ParseError);
  try {
    op.parse_shape("n=5000");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}

TEST(Op, ChecksumDependsOnManifestAndSeals) {
  auto a = make();
  auto b = make("c");
  auto c = make("b", 2);
  auto d = make();
  EXPECT_NE(a->checksum(), b->checksum());
  EXPECT_NE(a->checksum(), c->checksum());
  EXPECT_EQ(a->checksum(), d->checksum());
  EXPECT_TRUE(a->sealed());
  EXPECT_THROW(a->candidate("late", [](OpTestArgs&) {}), UsageError);
}

TEST(Op, DefaultsAndDuplicates) {
  auto op_ptr = make();
  auto& op = *op_ptr;
  EXPECT_EQ(op.default_index(Key{}), 0u);
  EXPECT_THROW(op.candidate("a", [](OpTestArgs&) {}), UsageError);
  Op<OpTestArgs> bad("bad", 1);
  bad.candidate("x", [](OpTestArgs&) {}).default_candidate("missing");
  EXPECT_THROW(bad.default_index(Key{}), UsageError);
  Op<OpTestArgs> by_key("by_key", 1);
  by_key.candidate("small", [](OpTestArgs&) {}).candidate("large", [](OpTestArgs&) {});
  by_key.default_candidate([](const Key& k) { return k.integer("n") > 10 ? "large" : "small"; });
  EXPECT_EQ(by_key.default_index(Key{{"n", 100}}), 1u);
  EXPECT_EQ(by_key.default_index(Key{{"n", 1}}), 0u);
  EXPECT_THROW(by_key.make_workload(Key{}), UsageError);  // no input generator
}

// An op whose candidate "clobber" overwrites its input, and whose generator makes two sets.
std::unique_ptr<Op<OpTestArgs>> make_with_inputs() {
  auto op = std::make_unique<Op<OpTestArgs>>("inputs", 1);
  op->candidate("copy", [](OpTestArgs&) {})
      .candidate("clobber", [](OpTestArgs& a) { std::fill(a.x.begin(), a.x.end(), -1.0f); })
      .inputs([](const Key& key, int input_set) {
        return OpTestArgs{std::vector<float>(static_cast<std::size_t>(key.integer("n")),
                                             static_cast<float>(input_set + 1))};
      })
      .outputs(
          [](OpTestArgs& a) { return std::vector<OutputView>{OutputView::of(std::span(a.x))}; });
  return op;
}

TEST(Op, InputSetsComeFromTheTwoArgumentGenerator) {
  auto op = make_with_inputs();
  EXPECT_EQ(op->input_sets(), 2);
  const Key key{{"n", 3}};
  EXPECT_EQ(op->make_workload(key)->outputs()[0].count, 3u);
  const auto first = [](Workload& w) { return static_cast<const float*>(w.outputs()[0].data)[0]; };
  EXPECT_EQ(first(*op->make_workload(key)), 1.0f);  // the one-argument form is set 0
  EXPECT_EQ(first(*op->make_workload(key, 0)), 1.0f);
  EXPECT_EQ(first(*op->make_workload(key, 1)), 2.0f);
  EXPECT_THROW(op->make_workload(key, 2), UsageError);
  EXPECT_THROW(op->make_workload(key, -1), UsageError);

  Op<OpTestArgs> one("one", 1);
  one.inputs([](const Key&) { return OpTestArgs{{1.0f}}; }).outputs([](OpTestArgs& a) {
    return std::vector<OutputView>{OutputView::of(std::span(a.x))};
  });
  EXPECT_EQ(one.input_sets(), 1);
  EXPECT_THROW(one.make_workload(Key{}, 1), UsageError);
}

TEST(Op, RestoreInputsCopiesThePristineArgsBackInPlace) {
  auto op = make_with_inputs();
  auto w = op->make_workload(Key{{"n", 4}});
  const void* before = w->outputs()[0].data;
  w->run_candidate(1);  // clobbers the input
  EXPECT_EQ(static_cast<const float*>(w->outputs()[0].data)[2], -1.0f);
  ASSERT_TRUE(w->restore_inputs());
  const OutputView after = w->outputs()[0];
  EXPECT_EQ(after.data, before);  // the same buffer: pointers a backend holds stay valid
  for (std::size_t i = 0; i < after.count; ++i)
    EXPECT_EQ(static_cast<const float*>(after.data)[i], 1.0f);
}

TEST(Op, RestoreFunctionReplacesTheCopyAndMoveOnlyArgsCannotRestore) {
  auto op = make_with_inputs();
  int restored = 0;
  op->restore([&](OpTestArgs& a) {
    ++restored;
    std::fill(a.x.begin(), a.x.end(), 7.0f);
  });
  auto w = op->make_workload(Key{{"n", 2}});
  EXPECT_TRUE(w->restore_inputs());
  EXPECT_EQ(restored, 1);
  EXPECT_EQ(static_cast<const float*>(w->outputs()[0].data)[1], 7.0f);

  struct MoveOnly {
    std::unique_ptr<float> x = std::make_unique<float>(0.0f);
  };
  Op<MoveOnly> move_only("move_only", 1);
  move_only.inputs([](const Key&) { return MoveOnly{}; }).outputs([](MoveOnly& a) {
    return std::vector<OutputView>{OutputView::of(std::span(a.x.get(), 1))};
  });
  EXPECT_FALSE(move_only.make_workload(Key{})->restore_inputs());  // the caller makes a fresh one
}

TEST(Op, ValidatorHooksSeeTheArguments) {
  auto op = make_with_inputs();
  int poisoned = 0;
  op->validator([&](OpTestArgs& a) { poisoned += static_cast<int>(a.x.size()); },
                [](const OpTestArgs& a) -> std::optional<std::string> {
                  if (a.x[0] < 0) return "x[0] went negative";
                  return std::nullopt;
                });
  auto w = op->make_workload(Key{{"n", 3}});
  w->before_check();
  EXPECT_EQ(poisoned, 3);
  EXPECT_EQ(w->after_check(), std::nullopt);
  w->run_candidate(1);
  EXPECT_EQ(w->after_check(), std::optional<std::string>("x[0] went negative"));

  auto plain = make_with_inputs();  // no hooks: nothing happens, everything passes
  auto pw = plain->make_workload(Key{{"n", 1}});
  pw->before_check();
  EXPECT_EQ(pw->after_check(), std::nullopt);
  op->validator(nullptr, nullptr);  // either may be empty
  EXPECT_EQ(op->make_workload(Key{{"n", 1}})->after_check(), std::nullopt);
}

TEST(Op, InProcessNeedsAReasonAndLeavesTheChecksum) {
  auto a = make();
  auto b = make();
  EXPECT_EQ(a->in_process_reason(), std::nullopt);
  EXPECT_THROW(b->in_process(""), UsageError);
  b->in_process("uses the caller's OpenMP runtime");
  EXPECT_EQ(b->in_process_reason(), std::optional<std::string>("uses the caller's OpenMP runtime"));
  EXPECT_EQ(a->checksum(), b->checksum());
}

// What "correct" means is part of the identity (issue #13): a stored choice made under another
// tolerance, reference, default or validation must not be served.
TEST(Op, ChecksumCoversWhatCorrectMeans) {
  const Digest base = make()->checksum();
  auto tolerance = make();
  tolerance->tolerance(Tolerance{.abs = 1e-6, .rel = 1e-6});
  EXPECT_NE(tolerance->checksum(), base);
  auto reference = make();
  reference->reference([](OpTestArgs&) {});
  EXPECT_NE(reference->checksum(), base);
  auto reference_version = make();
  reference_version->reference_version(2);
  EXPECT_NE(reference_version->checksum(), base);
  auto validation = make();
  validation->validation_version(2);
  EXPECT_NE(validation->checksum(), base);
  auto default_b = make();
  default_b->default_candidate("b");
  EXPECT_NE(default_b->checksum(), base);
  auto by_key = make();
  by_key->default_candidate([](const Key&) { return std::string("a"); });
  EXPECT_NE(by_key->checksum(), base);
  auto inputs = make();
  inputs->inputs([](const Key&, int) { return OpTestArgs{}; });
  EXPECT_NE(inputs->checksum(), base);  // two input sets judge a candidate twice
  EXPECT_EQ(reference_version->reference_version(), 2);
  EXPECT_EQ(validation->validation_version(), 2);
}

TEST(Op, RedeclaringTheSameMeaningKeepsTheChecksum) {
  auto a = make();
  auto b = make();
  b->tolerance(Tolerance{}).reference_version(1).validation_version(1).default_candidate("a");
  EXPECT_EQ(a->checksum(), b->checksum());
  Op<OpTestArgs> unnamed("list", 1);
  unnamed.candidate("x", [](OpTestArgs&) {}).candidate("y", [](OpTestArgs&) {});
  Op<OpTestArgs> named("list", 1);
  named.candidate("x", [](OpTestArgs&) {})
      .candidate("y", [](OpTestArgs&) {})
      .default_candidate("x");
  EXPECT_EQ(unnamed.checksum(), named.checksum());  // the unnamed default is the first one
  auto t1 = make();
  auto t2 = make();
  t1->tolerance(Tolerance{.abs = 1e-3, .rel = 0.0});
  t2->tolerance(Tolerance{.abs = 1e-3, .rel = 0.0});
  EXPECT_EQ(t1->checksum(), t2->checksum());
}

TEST(Op, SettingsOutsideCorrectnessLeaveTheChecksum) {
  const Digest base = make()->checksum();
  auto other = make();
  other->in_process("owns a device context").revalidate(false).rotate(3).evict().describe("x");
  other->work([](const Key&, const Candidate&) { return std::optional<Work>(); });
  EXPECT_EQ(other->checksum(), base);
}

TEST(Op, ChecksumForFoldsInPerKeyToleranceAndDefault) {
  auto fixed = make();
  EXPECT_EQ(fixed->checksum_for(Key{{"n", 5}}), fixed->checksum());
  const auto with_tolerance = [](double small_abs) {
    auto op = make();
    op->tolerance([small_abs](const Key& k) {
      return Tolerance{.abs = k.integer("n") < 10 ? small_abs : 1e-3, .rel = 0.0};
    });
    return op;
  };
  auto one = with_tolerance(1e-6);
  auto two = with_tolerance(1e-7);
  EXPECT_EQ(one->checksum(), two->checksum());  // a function counts only as "by key" here
  EXPECT_NE(one->checksum_for(Key{{"n", 5}}), two->checksum_for(Key{{"n", 5}}));
  EXPECT_EQ(one->checksum_for(Key{{"n", 50}}), two->checksum_for(Key{{"n", 50}}));
  EXPECT_NE(one->checksum_for(Key{{"n", 50}}), one->checksum());

  const auto with_default = [](std::string small) {
    auto op = make();
    op->default_candidate(
        [small](const Key& k) { return k.integer("n") < 10 ? small : std::string("b"); });
    return op;
  };
  auto da = with_default("a");
  auto db = with_default("b");
  EXPECT_NE(da->checksum_for(Key{{"n", 5}}), db->checksum_for(Key{{"n", 5}}));
  EXPECT_EQ(da->checksum_for(Key{{"n", 50}}), db->checksum_for(Key{{"n", 50}}));
}

TEST(Op, SealedOpRefusesChangesToWhatCorrectMeans) {
  auto op = make();
  op->checksum();
  EXPECT_THROW(op->tolerance(Tolerance{}), UsageError);
  EXPECT_THROW(op->tolerance([](const Key&) { return Tolerance{}; }), UsageError);
  EXPECT_THROW(op->reference([](OpTestArgs&) {}), UsageError);
  EXPECT_THROW(op->reference_version(2), UsageError);
  EXPECT_THROW(op->validation_version(2), UsageError);
  EXPECT_THROW(op->bucket("n", Bucketing::pow2()), UsageError);
  EXPECT_THROW(op->inputs([](const Key&) { return OpTestArgs{}; }), UsageError);
  op->revalidate(false);  // not part of the checksum: still allowed
  EXPECT_FALSE(op->revalidates());
}

TEST(Op, RevalidatesUnlessTheOpOptsOut) {
  auto op = make();
  EXPECT_TRUE(op->revalidates());
  op->revalidate(false);
  EXPECT_FALSE(op->revalidates());
  op->revalidate(true);
  EXPECT_TRUE(op->revalidates());
}

TEST(Op, BucketedSizesShareTheRepresentativeKey) {
  auto op = make();
  EXPECT_FALSE(op->buckets());
  op->bucket("n", Bucketing::pow2());
  EXPECT_TRUE(op->buckets());
  const Key k100 = op->bucket_of(op->parse_shape("n=100"));
  EXPECT_EQ(k100.text(), "n=128,dtype=f32");  // other fields unchanged
  EXPECT_EQ(op->bucket_of(op->parse_shape("n=120")).digest(), k100.digest());
  EXPECT_EQ(op->bucket_of(op->parse_shape("n=128")), k100);
  EXPECT_EQ(op->bucket_of(op->parse_shape("n=129")).text(), "n=256,dtype=f32");
  EXPECT_EQ(op->bucket_text(op->parse_shape("n=100")), "n: 65..128 (pow2)");
  EXPECT_EQ(op->bucket_text(op->parse_shape("n=1")), "n: 1 (pow2)");
}

TEST(Op, AnUnbucketedOpServesTheExactKey) {
  auto op = make();
  const Key key = op->parse_shape("n=100,dtype=f64");
  EXPECT_EQ(op->bucket_of(key), key);
  EXPECT_EQ(op->bucket_text(key), "");
}

TEST(Op, TheRepresentativeStaysWithinTheDeclaredMax) {
  auto op = make();  // n is declared in [1, 1000]
  op->bucket("n", Bucketing::pow2());
  EXPECT_EQ(op->bucket_of(op->parse_shape("n=600")).integer("n"), 1000);
  EXPECT_EQ(op->bucket_of(op->parse_shape("n=1000")).integer("n"), 1000);
  EXPECT_EQ(op->bucket_text(op->parse_shape("n=600")), "n: 513..1000 (pow2)");
  EXPECT_NO_THROW(op->check_key(op->bucket_of(op->parse_shape("n=600"))));
}

TEST(Op, SeveralBucketedFieldsAndExplicitRanges) {
  Op<OpTestArgs> op("multi", 1);
  op.candidate("x", [](OpTestArgs&) {})
      .bucket("n", Bucketing::ranges({64, 256}))
      .bucket("m", Bucketing::multiple_of(32));
  const Key key{{"m", 33}, {"n", 300}, {"dtype", "f32"}};
  EXPECT_EQ(op.bucket_of(key).text(), "m=64,n=300,dtype=f32");  // past the last range: exact
  EXPECT_EQ(op.bucket_text(key), "m: 33..64 (multiple_of:32), n: 300 (ranges:64,256)");
  EXPECT_EQ(op.bucket_text(Key{{"m", 1}, {"n", 2}}),
            "m: 1..32 (multiple_of:32), n: ..64 (ranges:64,256)");
}

TEST(Op, BucketingOnlyIntegerFieldsTheKeyHas) {
  auto op = make();
  EXPECT_THROW(op->bucket("dtype", Bucketing::pow2()), UsageError);  // declared a string
  op->bucket("n", Bucketing::pow2());
  EXPECT_THROW(op->bucket("n", Bucketing::multiple_of(8)), UsageError);  // twice
  Op<OpTestArgs> loose("loose", 1);
  loose.candidate("x", [](OpTestArgs&) {}).bucket("n", Bucketing::pow2());
  try {
    loose.bucket_of(Key{{"m", 3}});
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("has no such field"), std::string::npos) << e.what();
  }
  EXPECT_THROW(loose.bucket_of(Key{{"n", "big"}}), UsageError);
  EXPECT_THROW(loose.bucket_text(Key{{"n", 1.5}}), UsageError);
}

TEST(Op, BucketingIsPartOfTheChecksum) {
  const auto bucketed = [](std::vector<std::pair<std::string, Bucketing>> buckets) {
    auto op = make();
    op->key_field({"m", Value::Type::integer, "rows"});
    for (auto& [field, b] : buckets) op->bucket(field, b);
    return op->checksum();
  };
  const Digest pow2 = bucketed({{"n", Bucketing::pow2()}});
  EXPECT_NE(pow2, bucketed({}));
  EXPECT_NE(pow2, bucketed({{"n", Bucketing::multiple_of(64)}}));
  EXPECT_NE(pow2, bucketed({{"m", Bucketing::pow2()}}));
  EXPECT_EQ(pow2, bucketed({{"n", Bucketing::pow2()}}));
  // The declaration order of two buckets does not change their meaning.
  EXPECT_EQ(bucketed({{"n", Bucketing::pow2()}, {"m", Bucketing::multiple_of(8)}}),
            bucketed({{"m", Bucketing::multiple_of(8)}, {"n", Bucketing::pow2()}}));
}

// A typed key (Op::key(names, values)): what Tuner::run hashes on a hit.
struct Shape {
  long m = 0;
  double alpha = 0;
  bool trans = false;
  std::string dtype;
};

std::unique_ptr<Op<Shape>> typed_op(std::vector<std::string> names = {"m", "alpha", "trans",
                                                                      "dtype"}) {
  auto made = std::make_unique<Op<Shape>>("typed", 1);
  made->key(std::move(names),
            [](const Shape& s) {
              return KeyValues{s.m, s.alpha, s.trans, std::string_view(s.dtype)};
            })
      .candidate("a", [](Shape&) {});
  return made;
}

TEST(Op, ATypedKeyBuildsTheCanonicalKey) {
  const auto made = typed_op();
  Op<Shape>& op = *made;
  const Shape s{4096, 0.5, true, "f32"};
  const Key key = op.key_of(s);
  const Key expected{{"m", 4096}, {"alpha", 0.5}, {"trans", true}, {"dtype", "f32"}};
  EXPECT_EQ(key, expected);
  EXPECT_EQ(key.digest(), expected.digest());
  EXPECT_EQ(op.key_from(op.key_values(s)), expected);
  EXPECT_TRUE(op.typed_key());
}

TEST(Op, TheHotDigestFromTheKeyIsTheDigestOfTheRawValues) {
  const auto made = typed_op();
  Op<Shape>& op = *made;
  for (const Shape& s : {Shape{1, 0.0, false, ""}, Shape{-7, -0.0, true, "bf16"},
                         Shape{INT64_MAX, 1e300, false, std::string(KeyValues::max_text, 'x')}}) {
    const std::optional<Digest> from_key = op.hot_digest(op.key_of(s));
    ASSERT_TRUE(from_key.has_value());
    EXPECT_EQ(*from_key, op.hot_digest(op.key_values(s)));
  }
  // A Key parsed from text reaches the same entry as the raw values do.
  EXPECT_EQ(op.hot_digest(Key::parse("m=3,alpha=0.25,trans=true,dtype=f16")),
            op.hot_digest(op.key_values(Shape{3, 0.25, true, "f16"})));
}

TEST(Op, HotDigestsDifferByValueTypeAndNames) {
  Op<Shape> op("one", 1);
  op.key({"x"}, [](const Shape&) { return KeyValues{1}; }).candidate("a", [](Shape&) {});
  const Digest names{1, 2};
  const Digest i = KeyValues{1}.digest(names);
  EXPECT_NE(i, KeyValues{1.0}.digest(names));
  EXPECT_NE(i, KeyValues{true}.digest(names));
  EXPECT_NE(i, KeyValues{"1"}.digest(names));
  EXPECT_NE(i, KeyValues{1}.digest(Digest{1, 3}));
  EXPECT_NE(KeyValues{0.0}.digest(names), KeyValues{-0.0}.digest(names));  // as Keys differ
  EXPECT_NE((KeyValues{"ab", "c"}.digest(names)), (KeyValues{"a", "bc"}.digest(names)));
  // The same values under other names are another key.
  const Shape s{1, 2.0, false, "f32"};
  EXPECT_NE(typed_op()->hot_digest(typed_op()->key_values(s)),
            typed_op({"alpha", "m", "trans", "dtype"})->hot_digest(typed_op()->key_values(s)));
}

TEST(Op, AKeyNotShapedLikeTheDeclaredNamesHasNoHotDigest) {
  const auto made = typed_op();
  Op<Shape>& op = *made;
  EXPECT_FALSE(op.hot_digest(Key{{"m", 1}}).has_value());
  EXPECT_FALSE(
      op.hot_digest(Key{{"alpha", 0.5}, {"m", 1}, {"trans", true}, {"dtype", "f32"}}).has_value());
  EXPECT_FALSE(op.hot_digest(Key{{"m", 1},
                                 {"alpha", 0.5},
                                 {"trans", true},
                                 {"dtype", std::string(KeyValues::max_text + 1, 'x')}})
                   .has_value());
  // An op without a typed key has no hot digest at all.
  EXPECT_FALSE(make()->hot_digest(Key{{"n", 4}, {"dtype", "f32"}}).has_value());
  EXPECT_FALSE(make()->typed_key());
}

TEST(Op, TypedKeyMisuseIsAClearError) {
  const auto made = typed_op();
  Op<Shape>& op = *made;
  EXPECT_THROW(op.hot_digest(KeyValues{1, 2}), UsageError);
  EXPECT_THROW(op.key_from(KeyValues{1}), UsageError);
  EXPECT_THROW(KeyValues{std::string(KeyValues::max_text + 1, 'x')}, UsageError);
  KeyValues full{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_THROW(full.add(9), UsageError);
  EXPECT_THROW(KeyValues{}.add(~0ull), UsageError);
  EXPECT_THROW(typed_op({"m", "m", "trans", "dtype"}), UsageError);
  EXPECT_THROW(typed_op({"m", "", "trans", "dtype"}), UsageError);
  EXPECT_THROW(typed_op(std::vector<std::string>(KeyValues::capacity + 1, "x")), UsageError);
  EXPECT_THROW(make()->key_values(OpTestArgs{}), UsageError);
  // A Key function replaces a typed key (and the other way round).
  op.key([](const Shape& s) { return Key{{"m", s.m}}; });
  EXPECT_FALSE(op.typed_key());
  EXPECT_EQ(op.key_of(Shape{5, 0, false, ""}), (Key{{"m", 5}}));
}

}  // namespace
}  // namespace tunekit
