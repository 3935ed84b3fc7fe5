// OpBase: the type-erased view of a tunable operation the tuner works with (its key fields,
// candidates or space, checks, models and protocol); Op<Args> (tunekit/op.hpp) is the typed
// builder a kernel author writes (DESIGN §3, §14).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/bucketing.hpp"
#include "tunekit/candidate.hpp"
#include "tunekit/cost_model.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/key.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/space.hpp"
#include "tunekit/value.hpp"
#include "tunekit/workload.hpp"

namespace tunekit {

// One declared key field: the CLI parses shapes against these, and hostile sizes are
// refused before any allocation.
struct KeyField {
  std::string name;
  Value::Type type = Value::Type::integer;
  std::string description;
  std::optional<Value> default_value;  // filled in when a shape omits the field
  std::int64_t min = 1;                // integer fields only
  std::int64_t max = std::int64_t{1} << 40;
};

// An op's own timing protocol (Op::timing), overriding the tuner's sampling for that op on
// every backend: `warmup` untimed launches, then `launches` timed ones split into `windows`
// equal queued batches (each one reading of the device's clock), ranked by the median across
// windows. Seed 002's softmax contract is {10, 100, 5}. launches must be a multiple of windows.
struct TimingProtocol {
  int warmup = 10;
  int launches = 100;
  int windows = 5;
};

class OpBase {
 public:
  OpBase(std::string name, int schema_version);
  virtual ~OpBase();
  OpBase(const OpBase&) = delete;
  OpBase& operator=(const OpBase&) = delete;

  const std::string& name() const { return name_; }
  int schema_version() const { return schema_version_; }
  const std::string& description() const { return description_; }
  const std::vector<KeyField>& key_schema() const { return key_schema_; }

  // The candidates (DESIGN §3): a list (.candidate(...)) or the valid points of a Space
  // (.space(...)), never both. Index i is point i of enumeration().
  std::size_t size() const;
  // Candidate `index`; a space op builds it on demand from its point (name: the Config's
  // text, preference: the index, numerics and eligibility from the op's functions).
  Candidate candidate(std::size_t index) const;
  // The candidate space strategies search: the op's Space enumerated, or for a list op one
  // parameter "candidate" whose values are the names in order. Enumerated once, on first use.
  const Enumeration& enumeration() const;
  // The declared space (nullptr for a list op).
  const Space* space() const { return space_ ? &*space_ : nullptr; }
  std::optional<std::size_t> find(std::string_view candidate_name) const;

  // The default for a key: a fixed candidate, or a function of the key.
  std::size_t default_index(const Key& key) const;
  Tolerance tolerance(const Key& key) const;
  // How many input copies a timing window cycles through (1: none), so no candidate is timed
  // on a cache the real call would not have.
  int rotation(const Key& key) const;
  // Whether timing windows flush the last-level cache before each sample for this op.
  bool evicts() const { return evict_; }
  // The op's own timing protocol, when it declares one (Op::timing).
  const std::optional<TimingProtocol>& timing_protocol() const { return timing_protocol_; }
  // Stops what candidate `index` left running after it returned (Op::quiesce); does nothing
  // for an op without a quiesce step.
  void quiesce_candidate(std::size_t index) const;
  bool quiesces() const { return static_cast<bool>(quiesce_fn_); }
  bool has_reference() const { return has_reference_; }
  bool has_inputs() const { return has_inputs_; }
  // The cost model's view of candidate `index` on `key` (DESIGN §9): nullopt when the op has
  // no work model or it cannot score this candidate. Not part of the candidate-set checksum.
  // Whatever the op's function throws propagates (the tuner classifies it).
  std::optional<Work> work(const Key& key, std::size_t index) const;
  bool has_work_model() const { return static_cast<bool>(work_fn_); }
  // Whether the op has a build step (Op::build): building a candidate then changes the process.
  bool has_build_step() const { return static_cast<bool>(build_fn_); }

  // The indices of the op's anchors (see Op::anchors), in order.
  std::vector<std::size_t> anchor_indices() const;

  // Whether the op says which of its points compute the same thing for a key
  // (Op::effective_config).
  bool has_effective_config() const { return static_cast<bool>(effective_config_); }
  // One point per class of points whose effective configs for `key` are equal, ascending:
  // the first of `preferred` in a class where it has one (the default, the anchors), else the
  // class's lowest index (the tie-break order's first). Every index when the op declares no
  // effective config. What the op's function throws propagates as a UsageError naming the
  // point.
  std::vector<std::size_t> distinct_points(const Key& key,
                                           std::span<const std::size_t> preferred) const;

  // A typed key (Op::key(names, values)): the names declared once, the values per call.
  bool typed_key() const { return !key_names_.empty(); }
  const std::vector<std::string>& key_names() const { return key_names_; }
  // The canonical Key of typed key values: the declared names with `values`, in order. A count
  // other than the names' is a UsageError.
  Key key_from(const KeyValues& values) const;
  // What Tuner::run's hot index is keyed by: the values' digest under the declared names. A
  // count other than the names' is a UsageError.
  Digest hot_digest(const KeyValues& values) const {
    if (values.size() != key_names_.size()) wrong_value_count(values.size());
    return values.digest(key_names_digest_);
  }
  // The same digest from a canonical Key, so a choice published for a Key is found by run
  // from the raw values; nullopt when the op has no typed key, the key's field names are not
  // the declared ones in order, or a value does not fit KeyValues (a long string).
  std::optional<Digest> hot_digest(const Key& key) const;

  // Checks a key against the declared schema (names, types, ranges); UsageError otherwise.
  // An op without a schema accepts every key.
  void check_key(const Key& key) const;
  // Parses "m=256,n=128", fills declared defaults, orders fields as the schema does, checks.
  Key parse_shape(std::string_view shape) const;

  // Candidate-set checksum: digest of the ordered manifest (names, versions, configs,
  // numerics) — for a space op, of the space definition (parameters and their values in order,
  // constraint texts; a C++ predicate counts by its description) and the space version —
  // plus the op name and schema version, plus what "correct" means: whether there is a
  // reference and its declared version, the tolerance's exact values, the default (its name
  // or config), the validation version and the number of input sets; and the key bucketing.
  // A tolerance or default given as a function of the key counts only as "by key" here (see
  // checksum_for). Not in it: isolation (in_process), revalidate, rotation, eviction, the work
  // model. Computing it seals the op: changing any of these afterwards is a UsageError.
  const Digest& checksum() const {
    if (sealed()) return checksum_;  // the hot path's: no call_once once sealed
    return seal();
  }
  // checksum() with the per-key meaning of "correct" folded in: the exact tolerance at `key`
  // and the name of the default for `key`, for ops that declare either as a function of the
  // key (the same digest as checksum() otherwise): what a stored choice for `key` is to match
  // (for a bucketed op, `key` is the representative, bucket_of(key)). It runs those functions:
  // their errors propagate as from tolerance(key) and default_index(key).
  Digest checksum_for(const Key& key) const;
  int reference_version() const { return reference_version_; }
  int validation_version() const { return validation_version_; }

  // Whether a stored or artifact choice is validated against the reference (one untimed run)
  // the first time a process serves it. True unless the op opted out (Op::revalidate(false)).
  bool revalidates() const { return revalidate_; }

  // Key bucketing (DESIGN §3): whether the op declares any (Op::bucket).
  bool buckets() const { return !buckets_.empty(); }
  // The representative key of `key`'s bucket: every bucketed field replaced by its bucket's
  // upper bound (clamped to the field's declared max, so the representative stays a valid
  // key), other fields unchanged; `key` itself when the op declares no bucketing. A bucketed
  // field missing from `key`, or not an integer, is a UsageError.
  Key bucket_of(const Key& key) const;
  // "n: 65..128 (pow2), m: 64 (multiple_of:64)" for explain and cache show; "" when the op
  // declares no bucketing. Same errors as bucket_of.
  std::string bucket_text(const Key& key) const;
  bool sealed() const { return sealed_.load(std::memory_order_acquire); }

  // How many distinct input sets the op's generator makes for a key (1 or 2): a candidate is
  // validated on each, so a result right on one set only is caught.
  int input_sets() const { return input_sets_; }
  // Inputs for a key from the op's generator (UsageError when the op has none); set 0 is the
  // one tuning times on.
  std::unique_ptr<Workload> make_workload(const Key& key) const { return make_workload(key, 0); }
  // Input set `input_set` (0 <= input_set < input_sets(), else UsageError).
  virtual std::unique_ptr<Workload> make_workload(const Key& key, int input_set) const = 0;
  // Builds what candidate `index` ships for `key`, without inputs or a device trial: the op's
  // build step (Op::build, a runtime compilation) and, for a space op, its function (so the
  // first call builds nothing). A failure is an outcome (compile_failed with the log) or
  // throws, as the build step does. Deferred::build calls it.
  virtual Outcome build_for(const Key& key, std::size_t index) const = 0;

  // Set when this op's candidates must run on the caller's threads and in the caller's
  // process (e.g. they use a thread pool or device context the caller owns, or state a
  // worker process would not share): the tuner then never isolates them in a worker. The
  // text says why; it is reported, and it is not part of the candidate-set checksum.
  const std::optional<std::string>& in_process_reason() const { return in_process_reason_; }

 protected:
  void add_candidate(Candidate candidate);
  void set_space(Space space, int version);
  void set_points(Enumeration points, int version);
  void claim_space(int version);  // refuses a second space or a space beside a list
  bool spaced() const { return space_ || points_; }
  void require_unsealed(std::string_view what) const;
  void check_fields(const Key& key) const;
  Config config_of(std::size_t index) const;
  void add_bucket(std::string field, Bucketing bucketing);
  // The bucket of a bucketed field's value in `key`, clamped to the field's declared range.
  Bucket bucket_in(const Key& key, const std::string& field, const Bucketing& bucketing) const;
  std::string correctness_manifest() const;
  const Digest& seal() const;  // computes the checksum once, then sealed() is true
  void set_key_names(std::vector<std::string> names);  // empty: no typed key
  [[noreturn]] void wrong_value_count(std::size_t count) const;
  void check_timing_protocol(const TimingProtocol& protocol) const;

  std::string name_;
  int schema_version_;
  std::string description_;
  std::vector<Candidate> candidates_;  // a list op's
  std::optional<Space> space_;         // a space op's definition
  std::optional<Enumeration> points_;  // or its explicit points
  int space_version_ = 1;
  std::function<Numerics(const Config&)> numerics_of_config_;
  std::function<std::optional<std::string>(const Key&, const Config&)> eligible_of_config_;
  std::optional<Config> default_config_;
  std::function<Config(const Key&)> default_config_of_key_;
  std::function<Outcome(const Key&, const Config&)> build_fn_;
  std::vector<Config> anchors_;
  std::function<Config(const Key&, const Config&)> effective_config_;
  std::vector<KeyField> key_schema_;
  std::string default_name_;
  std::function<std::string(const Key&)> default_of_key_;
  Tolerance tolerance_;
  std::function<Tolerance(const Key&)> tolerance_of_key_;
  std::function<void(const Key&)> key_check_;
  std::function<int(const Key&)> rotation_of_key_;
  std::function<std::optional<Work>(const Key&, const Candidate&)> work_fn_;
  bool evict_ = false;
  std::optional<TimingProtocol> timing_protocol_;
  std::function<void(const Candidate&)> quiesce_fn_;
  bool has_reference_ = false;
  bool has_inputs_ = false;
  int input_sets_ = 1;
  std::optional<std::string> in_process_reason_;
  int reference_version_ = 1;
  int validation_version_ = 1;
  bool revalidate_ = true;
  std::vector<std::pair<std::string, Bucketing>> buckets_;  // sorted by field name
  std::vector<std::string> key_names_;                      // a typed key's, in order
  Digest key_names_digest_;

 private:
  mutable std::once_flag seal_once_;
  mutable std::atomic<bool> sealed_{false};
  mutable Digest checksum_;
  mutable std::once_flag enumerate_once_;
  mutable Enumeration enumeration_;
};

}  // namespace tunekit
