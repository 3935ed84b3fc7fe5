#include "tunekit/key.hpp"

#include <xxhash.h>

#include <cstdio>

#include "core/field_text.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {

std::string Digest::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return std::string(buf, 32);
}

Digest Digest::of(std::string_view bytes) {
  XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return Digest{h.high64, h.low64};
}

Key::Key() : digest_(Digest::of(encode())) {}
Key::Key(std::initializer_list<Field> fields) : Key(std::vector<Field>(fields)) {}
Key::Key(std::vector<Field> fields) : fields_(std::move(fields)) {
  for (std::size_t i = 0; i < fields_.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (fields_[i].name == fields_[j].name)
        throw UsageError("key names field '" + fields_[i].name + "' twice");
  digest_ = Digest::of(encode());
}

const Value* Key::find(std::string_view name) const {
  for (const auto& f : fields_)
    if (f.name == name) return &f.value;
  return nullptr;
}

const Value& Key::operator[](std::string_view name) const {
  if (const Value* v = find(name)) return *v;
  throw UsageError("key has no field '" + std::string(name) + "' (it is " + text() + ")");
}

std::string Key::encode() const {
  static constexpr char kTypeLetter[] = {'i', 'r', 's', 'b'};
  std::string out;
  for (const auto& f : fields_) {
    std::string value = detail::raw_text(f.value);
    out += std::to_string(f.name.size());
    out += ':';
    out += f.name;
    out += kTypeLetter[static_cast<int>(f.value.type())];
    out += std::to_string(value.size());
    out += ':';
    out += value;
  }
  return out;
}

std::string Key::text() const {
  return detail::fields_text(fields_);
}
Key Key::parse(std::string_view text) {
  return Key(detail::parse_fields(text));
}

}  // namespace tunekit
