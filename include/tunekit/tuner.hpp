// Tuner: serves a choice per (op, key) (DESIGN §7). select() on a hit is a lock-free table
// read; a miss searches (mode permitting) with single flight.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <optional>

#include "tunekit/deferred.hpp"
#include "tunekit/device.hpp"
#include "tunekit/identity.hpp"
#include "tunekit/key.hpp"
#include "tunekit/model_report.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner_options.hpp"

namespace tunekit {

struct Choice {
  std::size_t index = 0;
  Source source = Source::use_default;
};

class Tuner {
 public:
  explicit Tuner(Device& device, TunerOptions options = {});
  ~Tuner();
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  // The hot path. A hit reads the in-memory table without taking a contended lock. A miss
  // follows the mode; while one caller tunes a key, concurrent and nested callers get the
  // default at once. Fills *report when given.
  Choice select(const OpBase& op, const Key& key, TuneReport* report = nullptr);

  // Looks up the choice and calls it on the caller's arguments, once. When a chosen candidate
  // that is not the default throws, the choice is retracted (here and in the store), the
  // candidate is banned for this key, and the exception reaches the caller unchanged; the next
  // call chooses again without it (DESIGN §7). Never re-run on another candidate, with one
  // exception: a chosen candidate whose build fails (TrialError compile_failed, an advisory
  // build) runs the default instead, and TunerOptions::hooks.on_fallback hears why. A failure of
  // the default, a FatalError or a UsageError propagates and bans nothing.
  // An op with a typed key (Op::key(names, values)) is served from a hash of the raw values
  // when this tuner already serves its key: no Key is built, no allocation; otherwise the Key
  // is built and select() decides.
  template <class Args>
  void run(const Op<Args>& op, Args& args) {
    if (op.typed_key()) {
      const KeyValues values = op.key_values(args);
      if (const std::optional<std::size_t> index = hot_hit(op, op.hot_digest(values)))
        return call(op, *index, args, [&] { return op.key_from(values); });
      const Key key = op.key_from(values);
      return call(op, select(op, key).index, args, [&] { return key; });
    }
    const Key key = op.key_of(args);
    call(op, select(op, key).index, args, [&] { return key; });
  }

  // A read-only probe: the choice this tuner already serves for (op, key) from memory, or
  // nullopt. Never searches, never waits, never reads the store.
  std::optional<Choice> settled(const OpBase& op, const Key& key) const;

  // Searches now, whatever the mode and the table say, and publishes the winner.
  TuneReport tune(const OpBase& op, const Key& key);
  // tune(), with the winner's build deferred (DESIGN §7): the report comes first, and the
  // search's trials, inputs and device buffers are released before it returns (a Deferred
  // dropped unbuilt costs nothing on the device). Deferred::build() builds what it ships at
  // most once, falling back to the default as options().hooks say (on_fallback, fallback_if,
  // on_unrecovered). The op must outlive the Deferred.
  Deferred tune_deferred(const OpBase& op, const Key& key);

  // Cost model, zero measurement (DESIGN §7). The model's pick for (op, key) under the
  // options' envelope: the argmin of ranking_seconds among admitted, scored candidates. An
  // unscored candidate never beats the default, ties (tie band) go to the default, and a
  // missing envelope or any classified failure gives the default with source `default`.
  // Nothing is published or stored: a measured choice stays the only persistent one.
  Choice model_default(const OpBase& op, const Key& key, ModelReport* report = nullptr);
  // The same decision for any envelope (e.g. another device's profile), without building.
  Choice model_choice(const OpBase& op, const Key& key, const Envelope& envelope,
                      ModelReport* report = nullptr) const;
  // Every candidate with its model score, its admission under the numerics policy and its
  // stored measurement where the store has one.
  ModelReport explain(const OpBase& op, const Key& key);
  // The envelope the options name (see TunerOptions::model.envelope); nullopt when none is found.
  // *origin says where it came from.
  std::optional<Envelope> envelope(std::string* origin = nullptr) const;

  // Sets the environment tags; only before the first select/tune (UsageError afterwards,
  // since choices already served were judged under the old tags).
  void set_environment_tags(EnvironmentTags tags);
  // The identity a choice for (op, key) is stored under.
  Identity identity(const OpBase& op, const Key& key) const;
  // The persistent store in use, or nullptr when memory-only.
  Store* store();

  const TunerOptions& options() const;
  Device& device();

 private:
  // run()'s call of the chosen candidate; the key is only made when the candidate throws.
  template <class Args, class MakeKey>
  void call(const Op<Args>& op, std::size_t index, Args& args, MakeKey&& make_key) {
    try {
      op.call(index, args);
    } catch (...) {
      const Key key = make_key();
      if (!live_failure(op, key, index, std::current_exception())) throw;
      op.call(op.default_index(key), args);
    }
  }
  // run()'s probe of the hot index: the choice served for a typed key's values (their
  // OpBase::hot_digest), or nullopt (not served yet, retracted, or mode off).
  std::optional<std::size_t> hot_hit(const OpBase& op, const Digest& values) const;
  // run()'s handling of a chosen candidate's exception; true: run the default instead.
  bool live_failure(const OpBase& op, const Key& key, std::size_t index,
                    const std::exception_ptr& error);

  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tunekit
