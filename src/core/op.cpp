#include "tunekit/op.hpp"

#include <algorithm>

#include "core/field_text.hpp"

namespace tunekit {

OpBase::OpBase(std::string name, int schema_version)
    : name_(std::move(name)), schema_version_(schema_version) {
  if (name_.empty()) throw UsageError("an op needs a non-empty name");
}

OpBase::~OpBase() = default;

std::optional<std::size_t> OpBase::find(std::string_view candidate_name) const {
  for (std::size_t i = 0; i < candidates_.size(); ++i)
    if (candidates_[i].name == candidate_name) return i;
  return std::nullopt;
}

void OpBase::require_unsealed(std::string_view what) const {
  if (sealed()) {
    throw UsageError("op '" + name_ + "': " + std::string(what) +
                     " after the op was first used by a tuner; finish building the op first");
  }
}

void OpBase::add_candidate(Candidate candidate) {
  require_unsealed("adding a candidate");
  if (candidate.name.empty()) throw UsageError("op '" + name_ + "': a candidate needs a name");
  if (find(candidate.name))
    throw UsageError("op '" + name_ + "' already has a candidate named '" + candidate.name + "'");
  candidates_.push_back(std::move(candidate));
}

std::size_t OpBase::default_index(const Key& key) const {
  if (candidates_.empty()) throw UsageError("op '" + name_ + "' has no candidates");
  std::string name = default_of_key_ ? default_of_key_(key) : default_name_;
  if (name.empty()) return 0;  // the first candidate is the default unless one is named
  if (auto i = find(name)) return *i;
  throw UsageError("op '" + name_ + "': the default candidate '" + name + "' does not exist");
}

Tolerance OpBase::tolerance(const Key& key) const {
  return tolerance_of_key_ ? tolerance_of_key_(key) : tolerance_;
}

std::optional<Work> OpBase::work(const Key& key, std::size_t index) const {
  if (!work_fn_ || index >= candidates_.size()) return std::nullopt;
  return work_fn_(key, candidates_[index]);
}

int OpBase::rotation(const Key& key) const {
  return rotation_of_key_ ? std::max(1, rotation_of_key_(key)) : 1;
}

void OpBase::check_key(const Key& key) const {
  check_fields(key);
  if (key_check_) key_check_(key);
}

void OpBase::check_fields(const Key& key) const {
  if (key_schema_.empty()) return;
  for (const auto& f : key.fields()) {
    auto it = std::find_if(key_schema_.begin(), key_schema_.end(),
                           [&](const KeyField& k) { return k.name == f.name; });
    if (it == key_schema_.end()) {
      std::string known;
      for (const auto& k : key_schema_) known += (known.empty() ? "" : ", ") + k.name;
      throw UsageError("op '" + name_ + "' has no key field '" + f.name + "' (fields: " + known +
                       ")");
    }
  }
  for (const auto& k : key_schema_) {
    const Value* v = key.find(k.name);
    if (!v) throw UsageError("op '" + name_ + "': key field '" + k.name + "' is missing");
    if (v->type() != k.type) {
      throw UsageError("op '" + name_ + "': key field '" + k.name + "' must be " +
                       std::string(to_string(k.type)) + ", got " + v->text());
    }
    if (k.type == Value::Type::integer && (v->as_int() < k.min || v->as_int() > k.max)) {
      throw UsageError("op '" + name_ + "': key field '" + k.name + "'=" + v->text() +
                       " is out of range [" + std::to_string(k.min) + ", " + std::to_string(k.max) +
                       "]");
    }
  }
}

Key OpBase::parse_shape(std::string_view shape) const {
  std::vector<Field> given = detail::parse_fields(shape);
  if (key_schema_.empty()) return Key(std::move(given));
  std::vector<Field> ordered;
  for (const auto& f : given) {
    bool declared = std::any_of(key_schema_.begin(), key_schema_.end(),
                                [&](const KeyField& k) { return k.name == f.name; });
    if (!declared) check_key(Key(given));  // throws naming the unknown field
  }
  for (const auto& k : key_schema_) {
    auto it =
        std::find_if(given.begin(), given.end(), [&](const Field& f) { return f.name == k.name; });
    if (it != given.end()) {
      ordered.push_back(*it);
    } else if (k.default_value) {
      ordered.push_back(Field{k.name, *k.default_value});
    } else {
      throw UsageError("op '" + name_ + "': the shape needs '" + k.name + "' (" + k.description +
                       ")");
    }
  }
  Key key(std::move(ordered));
  check_key(key);
  return key;
}

const Digest& OpBase::checksum() const {
  std::call_once(seal_once_, [this] {
    std::string manifest =
        std::to_string(name_.size()) + ":" + name_ + "#" + std::to_string(schema_version_) + ";";
    for (const auto& c : candidates_) {
      std::string config = c.config.text();
      manifest += std::to_string(c.name.size()) + ":" + c.name + "v" + std::to_string(c.version) +
                  "n" + std::string(to_string(c.numerics)) + std::to_string(config.size()) + ":" +
                  config + ";";
    }
    checksum_ = Digest::of(manifest);
    sealed_.store(true, std::memory_order_release);
  });
  return checksum_;
}

}  // namespace tunekit
