#include "tunekit/op.hpp"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>
#include <numeric>
#include <unordered_map>

#include <fmt/format.h>

#include "core/field_text.hpp"

namespace tunekit {
namespace {

// Length-delimited, so no two different manifests read the same.
std::string delimited(std::string_view s) {
  return std::to_string(s.size()) + ":" + std::string(s);
}

// A tolerance by the bits of its values: exact, and the same on every machine.
std::string tolerance_bits(const Tolerance& t) {
  return fmt::format("{:016x},{:016x}", std::bit_cast<std::uint64_t>(t.abs),
                     std::bit_cast<std::uint64_t>(t.rel));
}

}  // namespace

OpBase::OpBase(std::string name, int schema_version)
    : name_(std::move(name)), schema_version_(schema_version) {
  if (name_.empty()) throw UsageError("an op needs a non-empty name");
}

OpBase::~OpBase() = default;

std::size_t OpBase::size() const {
  return spaced() ? enumeration().size() : candidates_.size();
}

const Enumeration& OpBase::enumeration() const {
  std::call_once(enumerate_once_, [this] {
    if (space_) {
      enumeration_ = space_->enumerate();
      return;
    }
    if (points_) {
      enumeration_ = *points_;
      return;
    }
    // A list is a space of one parameter: strategies search both the same way.
    Parameter p{"candidate", {}};
    std::vector<std::uint32_t> points;
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      p.values.emplace_back(candidates_[i].name);
      points.push_back(static_cast<std::uint32_t>(i));
    }
    enumeration_ = Enumeration::from_points({std::move(p)}, std::move(points));
  });
  return enumeration_;
}

Config OpBase::config_of(std::size_t index) const {
  if (!spaced()) return candidates_.at(index).config;
  if (index >= enumeration().size())
    throw UsageError("op '" + name_ + "': candidate " + std::to_string(index) +
                     " is not a point of its space (" + std::to_string(enumeration().size()) +
                     " points)");
  return enumeration().config(index);
}

Candidate OpBase::candidate(std::size_t index) const {
  if (!spaced()) return candidates_.at(index);
  Candidate c;
  c.config = config_of(index);
  c.name = c.config.text();
  c.version = space_version_;
  c.preference = static_cast<int>(std::min<std::size_t>(index, INT32_MAX));
  if (numerics_of_config_) c.numerics = numerics_of_config_(c.config);
  if (eligible_of_config_) {
    c.eligible = [fn = eligible_of_config_, config = c.config](const Key& key) {
      return fn(key, config);
    };
  }
  return c;
}

std::vector<std::size_t> OpBase::anchor_indices() const {
  std::vector<std::size_t> out;
  for (const Config& c : anchors_) {
    std::optional<std::size_t> i = enumeration().index_of(c);
    if (!i) {
      throw UsageError("op '" + name_ + "': the anchor '" + c.text() +
                       "' is not a point of its candidate space");
    }
    out.push_back(*i);
  }
  return out;
}

std::vector<std::size_t> OpBase::distinct_points(const Key& key,
                                                 std::span<const std::size_t> preferred) const {
  const std::size_t n = size();
  std::vector<std::size_t> out;
  if (!effective_config_) {
    out.resize(n);
    std::iota(out.begin(), out.end(), std::size_t{0});
    return out;
  }
  if (!spaced())
    throw UsageError("op '" + name_ + "': effective_config is for a space op: declare .space(...)");
  const Enumeration& points = enumeration();
  auto effective = [&](std::size_t i) {
    const Config config = points.config(i);
    try {
      return effective_config_(key, config).text();
    } catch (const std::exception& e) {
      throw UsageError("op '" + name_ + "': its effective_config failed for " + config.text() +
                       " at " + key.text() + ": " + e.what());
    }
  };
  std::unordered_map<std::string, std::size_t> kept;  // effective config -> the point measured
  for (std::size_t i : preferred)
    if (i < n) kept.try_emplace(effective(i), i);
  for (std::size_t i = 0; i < n; ++i) kept.try_emplace(effective(i), i);
  out.reserve(kept.size());
  for (const auto& [text, index] : kept) out.push_back(index);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::size_t> OpBase::find(std::string_view candidate_name) const {
  if (spaced()) {
    // A space candidate is named by its Config text: parse it and look the point up.
    try {
      return enumeration().index_of(Config::parse(candidate_name));
    } catch (const UsageError&) {  // ParseError included: not a config's text
      return std::nullopt;
    }
  }
  for (std::size_t i = 0; i < candidates_.size(); ++i)
    if (candidates_[i].name == candidate_name) return i;
  return std::nullopt;
}

void OpBase::claim_space(int version) {
  require_unsealed("space");
  if (spaced() || !candidates_.empty())
    throw UsageError("op '" + name_ +
                     "': an op has a list of candidates or one space, not both (and one space "
                     "only)");
  space_version_ = version;
}

void OpBase::set_points(Enumeration points, int version) {
  claim_space(version);
  points_ = std::move(points);
}

void OpBase::set_space(Space space, int version) {
  claim_space(version);
  space_ = std::move(space);
}

void OpBase::require_unsealed(std::string_view what) const {
  if (sealed()) {
    throw UsageError("op '" + name_ + "': " + std::string(what) +
                     " after the op was first used by a tuner; finish building the op first");
  }
}

void OpBase::add_candidate(Candidate candidate) {
  require_unsealed("adding a candidate");
  if (spaced())
    throw UsageError("op '" + name_ + "': an op has a list of candidates or one space, not both");
  if (candidate.name.empty()) throw UsageError("op '" + name_ + "': a candidate needs a name");
  if (find(candidate.name))
    throw UsageError("op '" + name_ + "' already has a candidate named '" + candidate.name + "'");
  candidates_.push_back(std::move(candidate));
}

std::size_t OpBase::default_index(const Key& key) const {
  if (spaced()) {
    if (enumeration().size() == 0)
      throw UsageError("op '" + name_ + "': its space has no valid point");
    if (!default_config_ && !default_config_of_key_) return 0;
    const Config config = default_config_of_key_ ? default_config_of_key_(key) : *default_config_;
    if (auto i = enumeration().index_of(config)) return *i;
    throw UsageError("op '" + name_ + "': the default config '" + config.text() +
                     "' is not a valid point of its space");
  }
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
  if (!work_fn_ || index >= size()) return std::nullopt;
  return work_fn_(key, candidate(index));
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

const Digest& OpBase::seal() const {
  std::call_once(seal_once_, [this] {
    std::string manifest =
        std::to_string(name_.size()) + ":" + name_ + "#" + std::to_string(schema_version_) + ";";
    if (spaced()) {
      // A space's definition, not its points: parameters and values in order, constraints.
      // Explicit points are digested as they are.
      manifest += "space v" + std::to_string(space_version_) + ";";
      const std::vector<Parameter>& params = space_ ? space_->parameters() : points_->parameters();
      for (const Parameter& p : params) {
        manifest += std::to_string(p.name.size()) + ":" + p.name + "[";
        for (const Value& v : p.values) {
          const std::string t = v.text();
          manifest +=
              std::to_string(static_cast<int>(v.type())) + std::to_string(t.size()) + ":" + t;
        }
        manifest += "];";
      }
      if (space_) {
        for (const Constraint& c : space_->constraints())
          manifest += "c" + std::to_string(c.text().size()) + ":" + c.text() + ";";
      } else {
        for (std::size_t i = 0; i < points_->size(); ++i) {
          for (std::uint32_t v : points_->point(i)) manifest += std::to_string(v) + ",";
          manifest += ";";
        }
      }
    }
    for (const auto& c : candidates_) {
      std::string config = c.config.text();
      manifest += std::to_string(c.name.size()) + ":" + c.name + "v" + std::to_string(c.version) +
                  "n" + std::string(to_string(c.numerics)) + std::to_string(config.size()) + ":" +
                  config + ";";
    }
    manifest += correctness_manifest();
    checksum_ = Digest::of(manifest);
    sealed_.store(true, std::memory_order_release);
  });
  return checksum_;
}

}  // namespace tunekit

namespace tunekit {

// What "correct" means and how keys are bucketed: a stored choice made under another meaning
// must not be served (issue #13).
std::string OpBase::correctness_manifest() const {
  std::string m = "ref" + std::string(has_reference_ ? "1" : "0") + "v" +
                  std::to_string(reference_version_) + ";";
  m += "tol" + (tolerance_of_key_ ? std::string("key") : tolerance_bits(tolerance_)) + ";";
  if (spaced()) {
    m += "dc" +
         (default_config_of_key_ ? std::string("key")
          : default_config_      ? delimited(default_config_->text())
                                 : std::string("first")) +
         ";";
  } else {
    // An unnamed default is the first candidate: name it, so naming it explicitly is the same.
    const std::string& first = candidates_.empty() ? default_name_ : candidates_.front().name;
    m += "d" +
         (default_of_key_ ? std::string("key")
                          : delimited(default_name_.empty() ? first : default_name_)) +
         ";";
  }
  m += "val" + std::to_string(validation_version_) + "s" + std::to_string(input_sets_) + ";";
  for (const auto& [field, bucketing] : buckets_)
    m += "b" + delimited(field) + delimited(bucketing.text()) + ";";
  return m;
}

Digest OpBase::checksum_for(const Key& key) const {
  const Digest& base = checksum();
  const bool default_by_key =
      spaced() ? static_cast<bool>(default_config_of_key_) : static_cast<bool>(default_of_key_);
  if (!tolerance_of_key_ && !default_by_key) return base;
  std::string m = base.hex() + ";";
  if (tolerance_of_key_) m += "tol" + tolerance_bits(tolerance_of_key_(key)) + ";";
  if (default_by_key) m += "d" + delimited(candidate(default_index(key)).name) + ";";
  return Digest::of(m);
}

void OpBase::add_bucket(std::string field, Bucketing bucketing) {
  require_unsealed("bucket");
  auto declared = std::find_if(key_schema_.begin(), key_schema_.end(),
                               [&](const KeyField& k) { return k.name == field; });
  if (declared != key_schema_.end() && declared->type != Value::Type::integer) {
    throw UsageError("op '" + name_ + "': key field '" + field + "' is " +
                     std::string(to_string(declared->type)) +
                     "; only integer fields can be bucketed");
  }
  auto at = std::lower_bound(buckets_.begin(), buckets_.end(), field,
                             [](const auto& b, const std::string& f) { return b.first < f; });
  if (at != buckets_.end() && at->first == field) {
    throw UsageError("op '" + name_ + "': key field '" + field + "' is already bucketed (" +
                     at->second.text() + "); declare one bucketing per field");
  }
  buckets_.emplace(at, std::move(field), std::move(bucketing));
}

Bucket OpBase::bucket_in(const Key& key, const std::string& field,
                         const Bucketing& bucketing) const {
  const Value* v = key.find(field);
  if (!v || !v->is_integer()) {
    throw UsageError("op '" + name_ + "' buckets key field '" + field + "', but the key '" +
                     key.text() + "' " + (v ? "holds a non-integer there" : "has no such field") +
                     "; bucket integer fields the key function always sets");
  }
  const std::int64_t value = v->as_int();
  Bucket b = bucketing.bucket(value);
  // A representative past the declared max would be refused as a key: the max covers the
  // bucket's valid sizes.
  auto declared = std::find_if(key_schema_.begin(), key_schema_.end(),
                               [&](const KeyField& k) { return k.name == field; });
  if (declared != key_schema_.end() && b.upper > declared->max && value <= declared->max)
    b.upper = declared->max;
  return b;
}

Key OpBase::bucket_of(const Key& key) const {
  if (buckets_.empty()) return key;
  std::vector<Field> fields(key.fields().begin(), key.fields().end());
  for (const auto& [field, bucketing] : buckets_) {
    const Bucket b = bucket_in(key, field, bucketing);
    for (Field& f : fields)
      if (f.name == field) f.value = Value(b.upper);
  }
  return Key(std::move(fields));
}

std::string OpBase::bucket_text(const Key& key) const {
  std::string out;
  for (const auto& [field, bucketing] : buckets_) {
    const Bucket b = bucket_in(key, field, bucketing);
    std::string range = b.lower == b.upper ? std::to_string(b.upper)
                        : b.lower == INT64_MIN
                            ? ".." + std::to_string(b.upper)
                            : std::to_string(b.lower) + ".." + std::to_string(b.upper);
    out += (out.empty() ? "" : ", ") + field + ": " + range + " (" + bucketing.text() + ")";
  }
  return out;
}

void OpBase::set_key_names(std::vector<std::string> names) {
  if (names.size() > KeyValues::capacity) {
    throw UsageError("op '" + name_ + "': a typed key has at most " +
                     std::to_string(KeyValues::capacity) + " fields; declare this key as a Key");
  }
  std::string manifest;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) throw UsageError("op '" + name_ + "': a key field needs a name");
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]) !=
        names.begin() + static_cast<std::ptrdiff_t>(i))
      throw UsageError("op '" + name_ + "': the typed key names field '" + names[i] + "' twice");
    manifest += delimited(names[i]);
  }
  key_names_ = std::move(names);
  key_names_digest_ = Digest::of(manifest);
}

void OpBase::wrong_value_count(std::size_t count) const {
  throw UsageError("op '" + name_ + "': its key function returned " + std::to_string(count) +
                   " values for " + std::to_string(key_names_.size()) +
                   " declared names; return one value per name, in order");
}

void OpBase::quiesce_candidate(std::size_t index) const {
  if (quiesce_fn_) quiesce_fn_(candidate(index));
}

void OpBase::check_timing_protocol(const TimingProtocol& p) const {
  // Bounded like MeasureOptions' own counts, so a protocol cannot ask for a window that never
  // ends (DESIGN §5: depth cap 2048 on GPUs).
  if (p.warmup < 0 || p.warmup > 100000 || p.windows < 1 || p.windows > 1000 || p.launches < 1 ||
      p.launches % p.windows != 0 || p.launches / p.windows > 2048)
    throw UsageError("op '" + name_ + "': timing protocol {warmup " + std::to_string(p.warmup) +
                     ", launches " + std::to_string(p.launches) + ", windows " +
                     std::to_string(p.windows) +
                     "}: give warmup 0..100000, windows 1..1000 and launches a multiple of "
                     "windows with at most 2048 launches per window");
}

Key OpBase::key_from(const KeyValues& values) const {
  if (values.size() != key_names_.size()) wrong_value_count(values.size());
  std::vector<Field> fields;
  fields.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    fields.push_back(Field{key_names_[i], values.value(i)});
  return Key(std::move(fields));
}

std::optional<Digest> OpBase::hot_digest(const Key& key) const {
  const auto fields = key.fields();
  if (!typed_key() || fields.size() != key_names_.size()) return std::nullopt;
  KeyValues values;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const Field& f = fields[i];
    if (f.name != key_names_[i]) return std::nullopt;
    if (f.value.is_string() && f.value.as_string().size() > KeyValues::max_text)
      return std::nullopt;
    values.add(f.value);
  }
  return values.digest(key_names_digest_);
}

}  // namespace tunekit
