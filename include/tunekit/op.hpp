// Op: a tunable operation. OpBase (tunekit/op_base.hpp) is the type-erased view the tuner
// works with; Op<Args> is the typed builder a kernel author writes (DESIGN §3, §14).
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tunekit/op_base.hpp"

namespace tunekit {

template <class Args>
class Op final : public OpBase {
 public:
  using Fn = std::function<void(Args&)>;
  // A validation check over a candidate's arguments: an error text fails it, nullopt passes.
  using CheckFn = std::function<std::optional<std::string>(const Args&)>;
  using OpBase::candidate;      // the getter, beside the builder
  using OpBase::make_workload;  // the one-set form, beside the override
  using OpBase::reference_version;
  using OpBase::tolerance;  // the getter, beside the builder's setters
  using OpBase::validation_version;
  using OpBase::work;

  Op(std::string name, int schema_version) : OpBase(std::move(name), schema_version) {}

  Op& describe(std::string text) {
    description_ = std::move(text);
    return *this;
  }
  Op& key_field(KeyField field) {
    require_unsealed("key_field");
    key_schema_.push_back(std::move(field));
    return *this;
  }
  // A check over the whole key beyond the per-field ranges (e.g. rows * cols bounded); it
  // throws UsageError. check_key and parse_shape run it.
  Op& key_check(std::function<void(const Key&)> fn) {
    key_check_ = std::move(fn);
    return *this;
  }
  Op& key(std::function<Key(const Args&)> fn) {
    key_fn_ = std::move(fn);
    values_fn_ = nullptr;
    set_key_names({});
    return *this;
  }
  // A typed key, the fast one: the field names once, and a function of the arguments that
  // returns only the values in the same order (e.g. KeyValues{a.m, a.n, "f32"}). Tuner::run
  // finds a served choice from a hash of the values, without building a Key; key_of builds
  // the same canonical Key a Key function would (Key{{"m", a.m}, {"n", a.n}, ...}). Names:
  // 1 to KeyValues::capacity, distinct, non-empty (UsageError otherwise).
  Op& key(std::vector<std::string> names, std::function<KeyValues(const Args&)> values) {
    if (!values) throw UsageError("op '" + name_ + "': a typed key needs a values function");
    set_key_names(std::move(names));
    values_fn_ = std::move(values);
    key_fn_ = nullptr;
    return *this;
  }
  // Makes inputs for a key so a key can be tuned without the caller's data (one input set).
  Op& inputs(std::function<Args(const Key&)> fn) {
    if (!fn) return set_inputs(nullptr, 1);
    return set_inputs([fn = std::move(fn)](const Key& key, int) { return fn(key); }, 1);
  }
  // The same with two input sets: fn(key, 0) is the set tuning times on, fn(key, 1) other
  // values of the same shape (e.g. another seed), so a candidate right on one set only fails
  // (before it can be chosen: the second set runs with the checked calls of the candidates
  // that could win, and at admission for the default).
  Op& inputs(std::function<Args(const Key&, int input_set)> fn) {
    return set_inputs(std::move(fn), 2);
  }
  // User validation (beside the reference comparison): `poison` runs after the outputs are
  // poisoned, before the candidate (e.g. to poison state no OutputView covers); `check` runs
  // after the outputs matched the reference, with the arguments, and returns an error text
  // (nullopt: correct). Either may be empty. A std::exception thrown by either fails the
  // candidate (validation_failed, with its text).
  Op& validator(Fn poison, CheckFn check) {
    poison_fn_ = std::move(poison);
    check_fn_ = std::move(check);
    return *this;
  }
  // How to put a workload's inputs back in place, for Args whose inputs are not held by value
  // (a handle to device buffers: re-upload them). Without it the workload keeps a copy of the
  // Args it was made with and copy-assigns it back (Args must then be copyable).
  Op& restore(Fn fn) {
    restore_fn_ = std::move(fn);
    return *this;
  }
  // Members of Args that every candidate overwrites in full and never reads (an out-of-place
  // op's outputs): a workload made with Args held by value does not copy them back before a
  // phase — copying a 16 MB output back before every window cost as much as copying its input
  // (docs/performance.md "Copying back the inputs only") — but keeps their storage, and copies
  // one back only where a candidate changed its size. Everything else in Args is copied back
  // as before. An output a candidate also reads (C += A·B) is an input: not write-only. Not
  // used where restore(fn) is given.
  template <class... Member>
  Op& write_only(Member Args::*... members) {
    static_assert(sizeof...(members) > 0, "write_only: name at least one member of Args");
    static_assert(kCopyable, "write_only: Args must be copyable (else give restore(fn))");
    static_assert((kFlatOutput<Member> && ...),
                  "write_only: each member is a trivially copyable value or a contiguous "
                  "container of them (std::vector<float>), moved without throwing");
    // Checked on each workload's Args (make_workload): each named once, each an output the
    // validation poisons (what a candidate leaves in it is then never read as an input).
    check_write_only_ = [name = name_, members...](Args& args,
                                                   const std::vector<OutputView>& outputs) {
      const std::vector<const void*> member_at{static_cast<const void*>(&(args.*members))...};
      const std::vector<const void*> storage{storage_of(args.*members)...};
      for (std::size_t i = 0; i < member_at.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j)
          if (member_at[i] == member_at[j])
            throw UsageError("op '" + name + "': write_only names member " + std::to_string(i + 1) +
                             " twice: name each member once");
        bool output = storage[i] == nullptr;  // empty: nothing to poison or keep
        for (const OutputView& o : outputs) output |= o.data == storage[i];
        if (!output)
          throw UsageError("op '" + name + "': write_only member " + std::to_string(i + 1) +
                           " is not one of its outputs (validation poisons only those): leave " +
                           "it out, or expose it in outputs()");
      }
    };
    copy_back_ = [members...](Args& args, Args& made) {
      // Moved out of both sides (a moved-from vector is empty), so the copy below copies none
      // of them; then each side gets its own back.
      std::tuple<Member...> kept{std::move(args.*members)...};
      std::tuple<Member...> held{std::move(made.*members)...};
      const auto give_back = [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((made.*members = std::move(std::get<I>(held))), ...);
        ((args.*members = std::move(std::get<I>(kept))), ...);
      };
      try {
        args = made;
      } catch (...) {
        give_back(std::index_sequence_for<Member...>{});
        throw;
      }
      give_back(std::index_sequence_for<Member...>{});
      (resize_back(args.*members, made.*members), ...);
    };
    return *this;
  }
  // This op's candidates must run on the caller's threads and process, never in an isolated
  // worker (e.g. they use a thread pool or device context the caller owns): see
  // OpBase::in_process_reason. The reason is required and is reported.
  Op& in_process(std::string reason) {
    if (reason.empty()) {
      throw UsageError("op '" + name_ + "': in_process needs a reason (say why its candidates " +
                       "cannot run in a worker process)");
    }
    in_process_reason_ = std::move(reason);
    return *this;
  }
  // The buffers a candidate writes: poisoned before validation, compared to the reference.
  Op& outputs(std::function<std::vector<OutputView>(Args&)> fn) {
    outputs_fn_ = std::move(fn);
    return *this;
  }
  // Defines "correct". Without one, the default candidate's output is the reference.
  Op& reference(Fn fn) {
    require_unsealed("reference");
    reference_fn_ = std::move(fn);
    has_reference_ = static_cast<bool>(reference_fn_);
    return *this;
  }
  // Bump when the reference changes what it computes (a fix, a new formula): it is part of
  // the candidate-set checksum, so choices validated against the old reference are not served.
  Op& reference_version(int version) {
    require_unsealed("reference_version");
    reference_version_ = version;
    return *this;
  }
  // Bump when the validator hooks, the outputs compared or the input generator change how a
  // candidate is judged (and when a tolerance or default given as a function of the key
  // changes, beyond what checksum_for sees). Part of the candidate-set checksum.
  Op& validation_version(int version) {
    require_unsealed("validation_version");
    validation_version_ = version;
    return *this;
  }
  // Stored and artifact choices are validated once per process before they are first served
  // (one untimed run against the reference). An op without a cheap reference opts out with
  // revalidate(false): its stored choices are then served unchecked. Not part of the checksum.
  Op& revalidate(bool on) {
    revalidate_ = on;
    return *this;
  }
  // Buckets an integer key field: one stored choice serves every size in a bucket, searched
  // at the bucket's representative (its upper bound; see Bucketing). Part of the candidate-set
  // checksum. A field declared (key_field) as non-integer, or bucketed twice, is a UsageError.
  Op& bucket(std::string field, Bucketing bucketing) {
    add_bucket(std::move(field), std::move(bucketing));
    return *this;
  }
  Op& candidate(Candidate c, Fn fn) {
    add_candidate(std::move(c));
    fns_.push_back(std::move(fn));
    return *this;
  }
  Op& candidate(std::string name, Fn fn) {
    Candidate c;
    c.name = std::move(name);
    return candidate(std::move(c), std::move(fn));
  }
  Op& default_candidate(std::string name) {
    require_unsealed("default_candidate");
    default_name_ = std::move(name);
    return *this;
  }
  Op& default_candidate(std::function<std::string(const Key&)> fn) {
    require_unsealed("default_candidate");
    default_of_key_ = std::move(fn);
    return *this;
  }
  // Candidates as the valid points of a space (DESIGN §3, §14): `factory` makes the function
  // of one point, lazily — only for points a strategy proposes (and for the served choice).
  // Bump `version` when the implementation behind the points changes. An op has a list of
  // candidates or one space, not both.
  Op& space(Space space, std::function<Fn(const Config&)> factory, int version = 1) {
    set_space(std::move(space), version);
    factory_ = std::move(factory);
    return *this;
  }
  // A space given by its points (e.g. a recording's configurations).
  Op& space(Enumeration points, std::function<Fn(const Config&)> factory, int version = 1) {
    set_points(std::move(points), version);
    factory_ = std::move(factory);
    return *this;
  }
  // A space op's numerics class per point (default: bitwise).
  Op& numerics(std::function<Numerics(const Config&)> fn) {
    require_unsealed("numerics");
    numerics_of_config_ = std::move(fn);
    return *this;
  }
  // A space op's eligibility per point and key: a reason declines it (`rejected`).
  Op& eligible(std::function<std::optional<std::string>(const Key&, const Config&)> fn) {
    require_unsealed("eligible");
    eligible_of_config_ = std::move(fn);
    return *this;
  }
  // A space op's default point, fixed or per key (default: the first valid point). A config
  // that is not a valid point is a UsageError when the default is asked for.
  Op& default_config(Config config) {
    require_unsealed("default_config");
    default_config_ = std::move(config);
    return *this;
  }
  Op& default_config(std::function<Config(const Key&)> fn) {
    require_unsealed("default_config");
    default_config_of_key_ = std::move(fn);
    return *this;
  }
  // Anchors: configs every search measures right after the default, whatever the strategy
  // (exempt from the evaluation budget, like the default) — a library solution, so the pick
  // is never slower than the library. Each must be a point of the op's space (or, for a list
  // op, name a candidate: Config{{"candidate", name}}); anything else is a UsageError at search.
  Op& anchors(std::vector<Config> configs) {
    require_unsealed("anchors");
    anchors_ = std::move(configs);
    return *this;
  }
  // What a point of the space computes for a key, as a config (a space op only): points whose
  // effective configs are equal compute the same thing — a cache block at least as large as
  // the dimension it blocks is the whole dimension, whatever its value — so a search measures
  // one of them (the default or an anchor where the class holds one, else the first in
  // enumeration order) and never proposes the others for that key. The config returned need
  // not be a point of the space; only equality between them counts. Not in the candidate-set
  // checksum (like the work model): it changes what is measured, not what is correct.
  Op& effective_config(std::function<Config(const Key&, const Config&)> fn) {
    require_unsealed("effective_config");
    effective_config_ = std::move(fn);
    return *this;
  }
  // The build step of source backends (a runtime compilation), run for every proposed
  // candidate before any timing — in parallel, so it must be safe to call concurrently for
  // different configs — and memoised by the backend. Returns compile_failed with the log, or
  // throws (classified as compile_failed).
  Op& build(std::function<Outcome(const Config&)> fn) {
    require_unsealed("build");
    build_fn_ = [fn = std::move(fn)](const Key&, const Config& c) { return fn(c); };
    return *this;
  }
  // The same, for builds that depend on the key too (a key field in the build options).
  Op& build(std::function<Outcome(const Key&, const Config&)> fn) {
    require_unsealed("build");
    build_fn_ = std::move(fn);
    return *this;
  }
  Op& tolerance(Tolerance t) {
    require_unsealed("tolerance");
    tolerance_ = t;
    return *this;
  }
  // Input copies cycled while timing (1: off), fixed or per key.
  Op& rotate(int copies) {
    if (copies < 1) throw UsageError("op '" + name_ + "': rotate needs at least 1 copy");
    rotation_of_key_ = [copies](const Key&) { return copies; };
    return *this;
  }
  // Flush the last-level cache before every sample (for ops whose real calls run cold).
  Op& evict(bool on = true) {
    evict_ = on;
    return *this;
  }
  // The op's own timing protocol (see TimingProtocol); UsageError for counts below 1 or
  // launches that windows do not divide.
  Op& timing(TimingProtocol protocol) {
    check_timing_protocol(protocol);
    timing_protocol_ = protocol;
    return *this;
  }
  // Stops what a candidate leaves running after its call returns: a library's worker threads
  // that spin on (OpenBLAS's for ~0.1 s) and would take a core from whatever is timed next.
  // Called after each of the candidate's timing windows, so the next window need not wait
  // for them (Device::settle); every window of such an op begins with at least one warmup
  // launch, which restarts them untimed. Not part of the candidate-set checksum.
  Op& quiesce(std::function<void(const Candidate&)> fn) {
    quiesce_fn_ = std::move(fn);
    return *this;
  }
  Op& rotate(std::function<int(const Key&)> fn) {
    rotation_of_key_ = std::move(fn);
    return *this;
  }
  Op& tolerance(std::function<Tolerance(const Key&)> fn) {
    require_unsealed("tolerance");
    tolerance_of_key_ = std::move(fn);
    return *this;
  }
  // The work model: flops, bytes, re-reads and block working set of a candidate on a key,
  // for the cost model (nullopt: this candidate is not scored, and never beats the default).
  Op& work(std::function<std::optional<Work>(const Key&, const Candidate&)> fn) {
    work_fn_ = std::move(fn);
    return *this;
  }

  Key key_of(const Args& args) const {
    if (values_fn_) return key_from(values_fn_(args));
    if (!key_fn_) throw UsageError("op '" + name_ + "' has no key function: call .key(...)");
    return key_fn_(args);
  }
  // A typed key's values for `args` (see key(names, values)); UsageError without one.
  KeyValues key_values(const Args& args) const {
    if (!values_fn_) throw UsageError("op '" + name_ + "' has no typed key: call .key(names, fn)");
    return values_fn_(args);
  }
  // Runs candidate `index` on the caller's arguments (a space op builds its function once per
  // index and keeps it).
  void call(std::size_t index, Args& args) const { function(index)(args); }
  void call_reference(Args& args) const { reference_fn_(args); }

  std::unique_ptr<Workload> make_workload(const Key& key, int input_set) const override {
    if (!inputs_fn_) {
      throw UsageError("op '" + name_ + "' has no input generator: call .inputs(...) to tune it");
    }
    if (!outputs_fn_) {
      throw UsageError("op '" + name_ + "' declares no outputs: call .outputs(...) to validate it");
    }
    if (input_set < 0 || input_set >= input_sets_) {
      throw UsageError("op '" + name_ + "': input set " + std::to_string(input_set) +
                       " does not exist (it has " + std::to_string(input_sets_) +
                       "; pass a generator of (key, input_set) to .inputs for two)");
    }
    return std::make_unique<Bound>(*this, key, inputs_fn_(key, input_set));
  }
  Outcome build_for(const Key& key, std::size_t index) const override {
    Outcome built = build_point(key, index);
    if (built.ok()) function(index);
    return built;
  }

 private:
  // What restore_inputs copies back: the Args as made, when the op has no restore function
  // and Args can be copied.
  static constexpr bool kCopyable =
      std::is_copy_constructible_v<Args> && std::is_copy_assignable_v<Args>;
  struct NoCopy {};
  using Pristine = std::conditional_t<kCopyable, std::optional<Args>, NoCopy>;
  // A write-only member a candidate resized (or emptied) gets the size it was made with back.
  template <class T>
  static void resize_back(T& member, const T& made) {
    if constexpr (requires { member.size(); }) {
      if (member.size() != made.size()) member = made;
    }
  }
  // What write_only accepts: a flat value, or a contiguous container of flat values; either
  // moved without throwing (a throw half way would lose the live or the pristine copy).
  template <class T>
  static constexpr bool kFlatOutput =
      std::is_nothrow_move_constructible_v<T>&& std::is_nothrow_move_assignable_v<T> &&
      (std::is_trivially_copyable_v<T> || requires(T & t) {
        typename T::value_type;
        requires std::is_trivially_copyable_v<typename T::value_type>;
        { t.data() } -> std::convertible_to<const typename T::value_type*>;
        t.size();
      });
  // The first byte a write-only member's OutputView would start at (nullptr: empty).
  template <class T>
  static const void* storage_of(const T& member) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      return &member;
    } else {
      return member.size() == 0 ? nullptr : static_cast<const void*>(member.data());
    }
  }

  class Bound final : public Workload {
   public:
    Bound(const Op& op, Key key, Args args)
        : op_(op), key_(std::move(key)), args_(std::move(args)) {
      if constexpr (kCopyable) {
        if (!op_.restore_fn_) pristine_.emplace(args_);
      }
      if (op_.check_write_only_ && !op_.restore_fn_ && op_.outputs_fn_)
        op_.check_write_only_(args_, op_.outputs_fn_(args_));
    }
    Outcome build_candidate(std::size_t index) override { return op_.build_point(key_, index); }
    void run_candidate(std::size_t index) override { op_.function(index)(args_); }
    void run_reference() override { op_.reference_fn_(args_); }
    void quiesce_candidate(std::size_t index) override { op_.quiesce_candidate(index); }
    bool quiesces() const override { return op_.quiesces(); }
    std::vector<OutputView> outputs() override { return op_.outputs_fn_(args_); }
    void before_check() override {
      if (op_.poison_fn_) op_.poison_fn_(args_);
    }
    std::optional<std::string> after_check() override {
      if (!op_.check_fn_) return std::nullopt;
      return op_.check_fn_(args_);
    }
    bool restore_inputs() override {
      if (op_.restore_fn_) {
        op_.restore_fn_(args_);
        return true;
      }
      if constexpr (kCopyable) {
        if (op_.copy_back_) {
          op_.copy_back_(args_, *pristine_);
        } else {
          args_ = *pristine_;  // copy-assignment: vectors keep their storage, pointers stay valid
        }
        return true;
      } else {
        return false;
      }
    }

   private:
    const Op& op_;
    Key key_;
    Args args_;
    Pristine pristine_;
  };

  Op& set_inputs(std::function<Args(const Key&, int)> fn, int sets) {
    require_unsealed("inputs");  // the number of input sets is in the checksum
    inputs_fn_ = std::move(fn);
    has_inputs_ = static_cast<bool>(inputs_fn_);
    input_sets_ = has_inputs_ ? sets : 1;
    return *this;
  }

  // A space op's built functions: one atomic slot per point, so a call that finds its
  // function built takes no lock (the hot path of Tuner::run); building takes the lock once.
  const Fn& function(std::size_t index) const {
    if (!factory_) return fns_.at(index);
    std::call_once(slots_once_, [this] {
      slot_count_ = size();
      slots_ = std::make_unique<std::atomic<const Fn*>[]>(slot_count_);
    });
    if (index >= slot_count_) return fns_.at(index);  // throws out_of_range
    if (const Fn* f = slots_[index].load(std::memory_order_acquire)) return *f;
    std::lock_guard lock(built_mutex_);
    if (const Fn* f = slots_[index].load(std::memory_order_relaxed)) return *f;
    const Fn* f = &built_.emplace(index, factory_(config_of(index))).first->second;
    slots_[index].store(f, std::memory_order_release);
    return *f;
  }
  Outcome build_point(const Key& key, std::size_t index) const {
    if (!build_fn_) return Outcome::success();
    return build_fn_(key, config_of(index));
  }

  std::vector<Fn> fns_;
  std::function<Fn(const Config&)> factory_;
  mutable std::mutex built_mutex_;
  mutable std::map<std::size_t, Fn> built_;  // a space op's functions, by index (stable nodes)
  mutable std::once_flag slots_once_;
  mutable std::size_t slot_count_ = 0;
  mutable std::unique_ptr<std::atomic<const Fn*>[]> slots_;
  std::function<Key(const Args&)> key_fn_;
  std::function<KeyValues(const Args&)> values_fn_;
  std::function<Args(const Key&, int)> inputs_fn_;
  std::function<std::vector<OutputView>(Args&)> outputs_fn_;
  Fn reference_fn_;
  Fn poison_fn_;
  CheckFn check_fn_;
  Fn restore_fn_;
  std::function<void(Args&, Args&)> copy_back_;  // write_only(...): Args less those members
  std::function<void(Args&, const std::vector<OutputView>&)> check_write_only_;
};

}  // namespace tunekit
