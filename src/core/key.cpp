#include "tunekit/key.hpp"

// Inlined (and XXH3_state_t's layout known, so the streaming state lives on the stack): a typed
// key's digest is most of Tuner::run's cost on a hit.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/field_text.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

// XXH3-128 of the empty encoding (Key{}): what a moved-from Key is left with.
constexpr Digest kEmptyDigest{0x99aa06d3014798d8ull, 0x6001c324468d497full};

// memcpy for the short pieces of an encoding without a library call (the calls were a third
// of a key's cost): two overlapping fixed-size copies cover any length up to 16.
void copy_bytes(char* dst, const char* src, std::size_t n) {
  if (n > 16) {
    std::memcpy(dst, src, n);
  } else if (n >= 8) {
    std::memcpy(dst, src, 8);
    std::memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(dst, src, 4);
    std::memcpy(dst + n - 4, src + n - 4, 4);
  } else if (n >= 2) {
    std::memcpy(dst, src, 2);
    std::memcpy(dst + n - 2, src + n - 2, 2);
  } else if (n == 1) {
    *dst = *src;
  }
}

// "<n>:" at out; returns the end. Names and values are short: one or two digits inline.
char* write_length(char* out, std::size_t n) {
  if (n < 10) {
    *out++ = static_cast<char>('0' + n);
  } else if (n < 100) {
    *out++ = static_cast<char>('0' + n / 10);
    *out++ = static_cast<char>('0' + n % 10);
  } else {
    out = std::to_chars(out, out + 20, n).ptr;
  }
  *out++ = ':';
  return out;
}

std::size_t decimal_digits(std::uint64_t u) {
  static constexpr std::uint64_t kPow10[] = {1ull,
                                             10ull,
                                             100ull,
                                             1000ull,
                                             10000ull,
                                             100000ull,
                                             1000000ull,
                                             10000000ull,
                                             100000000ull,
                                             1000000000ull,
                                             10000000000ull,
                                             100000000000ull,
                                             1000000000000ull,
                                             10000000000000ull,
                                             100000000000000ull,
                                             1000000000000000ull,
                                             10000000000000000ull,
                                             100000000000000000ull,
                                             1000000000000000000ull,
                                             10000000000000000000ull};
  // log10 from the bit width (1233 / 4096 ~ log10(2)), corrected by one comparison.
  const std::size_t guess = (static_cast<std::size_t>(std::bit_width(u | 1)) * 1233) >> 12;
  return guess + ((u | 1) >= kPow10[guess] ? 1 : 0);  // u | 1: zero has one digit
}

// An integer's canonical text ("-12") as "<len>:<text>": its length is known before its
// digits, which are written from the right two at a time.
char* write_integer(char* out, std::int64_t v) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  const std::uint64_t u = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  const std::size_t digits = decimal_digits(u);
  out = write_length(out, digits + (v < 0 ? 1 : 0));
  if (v < 0) *out++ = '-';
  char* const end = out + digits;
  char* p = end;
  std::uint64_t rest = u;
  for (; rest >= 100; rest /= 100) {
    p -= 2;
    std::memcpy(p, kPairs + 2 * (rest % 100), 2);
  }
  if (rest >= 10) {
    std::memcpy(p - 2, kPairs + 2 * rest, 2);
  } else {
    p[-1] = static_cast<char>('0' + rest);
  }
  return end;
}

// A real's canonical text (as detail::raw_text writes it: shortest round trip, always with a
// '.' or an exponent) into buf. The digest tests pin the two to the same bytes.
std::string_view real_text(double x, char (&buf)[32]) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  // The shortest round-trip form is at most 24 characters: room is left for ".0".
  char* end = std::to_chars(buf, buf + sizeof buf - 2, x).ptr;
  if (std::find_if(buf, end, [](char c) { return c == '.' || c == 'e' || c == 'E'; }) == end) {
    *end++ = '.';
    *end++ = '0';
  }
  return {buf, end};
}

// Room for a type letter, two lengths and a number's text.
constexpr std::size_t kSmallPart = 64;

// One field's canonical encoding (key.hpp), written straight into the sink: formatting into a
// scratch buffer and copying it out stalled on store forwarding.
template <class Sink>
void encode_field(const Field& f, Sink& sink) {
  static constexpr char kTypeLetter[] = {'i', 'r', 's', 'b'};
  sink.commit(write_length(sink.room(kSmallPart), f.name.size()));
  sink.put(f.name);
  char* out = sink.room(kSmallPart);
  *out++ = kTypeLetter[static_cast<int>(f.value.type())];
  switch (f.value.type()) {
    case Value::Type::integer:
      return sink.commit(write_integer(out, f.value.as_int()));
    case Value::Type::real: {
      char buf[32];
      const std::string_view text = real_text(f.value.as_real(), buf);
      out = write_length(out, text.size());
      copy_bytes(out, text.data(), text.size());
      return sink.commit(out + text.size());
    }
    case Value::Type::boolean: {
      const std::string_view text = f.value.as_bool() ? "true" : "false";
      out = write_length(out, text.size());
      copy_bytes(out, text.data(), text.size());
      return sink.commit(out + text.size());
    }
    case Value::Type::string:
      sink.commit(write_length(out, f.value.as_string().size()));
      return sink.put(f.value.as_string());
  }
}

template <class Sink>
void encode_to(std::span<const Field> fields, Sink& sink) {
  for (const Field& f : fields) encode_field(f, sink);
}

// room(n) gives at least n writable bytes at the end; commit(end) keeps what was written.
class StringSink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  char* room(std::size_t n) {
    used_ = out_.size();
    out_.resize(used_ + n);
    return out_.data() + used_;
  }
  void commit(const char* end) { out_.resize(static_cast<std::size_t>(end - out_.data())); }
  void put(std::string_view bytes) { out_.append(bytes); }

 private:
  std::string& out_;
  std::size_t used_ = 0;
};

// Hashes the encoding without building it: bytes gather in a stack buffer hashed in one shot;
// only an encoding longer than the buffer streams through XXH3's state (same digest).
class DigestSink {
 public:
  char* room(std::size_t n) {
    if (n > sizeof buffer_ - used_) flush();
    return buffer_ + used_;
  }
  void commit(const char* end) { used_ = static_cast<std::size_t>(end - buffer_); }
  void put(std::string_view bytes) {
    if (bytes.size() > sizeof buffer_ - used_) {
      flush();
      if (bytes.size() > sizeof buffer_) {
        (void)XXH3_128bits_update(&state_, bytes.data(), bytes.size());
        return;
      }
    }
    copy_bytes(buffer_ + used_, bytes.data(), bytes.size());
    used_ += bytes.size();
  }
  Digest finish() {
    if (!streaming_) return to_digest(XXH3_128bits(buffer_, used_));
    flush();
    return to_digest(XXH3_128bits_digest(&state_));
  }

 private:
  static Digest to_digest(XXH128_hash_t h) { return Digest{h.high64, h.low64}; }
  void flush() {
    if (!streaming_) {
      (void)XXH3_128bits_reset(&state_);
      streaming_ = true;
    }
    (void)XXH3_128bits_update(&state_, buffer_, used_);
    used_ = 0;
  }

  char buffer_[256];
  std::size_t used_ = 0;
  bool streaming_ = false;
  XXH3_state_t state_;
};

Digest digest_of(std::span<const Field> fields) {
  DigestSink sink;
  encode_to(fields, sink);
  return sink.finish();
}

// Names rarely share a length and a first letter: that test settles most pairs without memcmp.
bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && (a.empty() || a[0] == b[0]) && a == b;
}

void check_unique(std::span<const Field> fields) {
  for (std::size_t i = 0; i < fields.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (same_name(fields[i].name, fields[j].name))
        throw UsageError("key names field '" + fields[i].name + "' twice");
}

}  // namespace

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

Key::Key() : digest_(digest_of({})) {}

Key::Key(std::initializer_list<Field> fields) {
  const std::span<const Field> view(fields.begin(), fields.size());
  check_unique(view);
  copy_from(view);
  digest_ = digest_of(this->fields());
}

Key::Key(std::vector<Field> fields) {
  check_unique(fields);
  const std::size_t n = fields.size();
  if (n > inline_fields) {
    heap_ = std::move(fields);
  } else {
    for (std::size_t i = 0; i < n; ++i) std::construct_at(&inline_.fields[i], std::move(fields[i]));
  }
  size_ = n;
  digest_ = digest_of(this->fields());
}

Key::Key(const Key& other) : digest_(other.digest_) {
  copy_from(other.fields());
}
Key::Key(Key&& other) noexcept {
  move_from(other);
}

Key& Key::operator=(const Key& other) {
  if (this != &other) *this = Key(other);  // copy first: a throwing copy leaves *this intact
  return *this;
}

Key& Key::operator=(Key&& other) noexcept {
  if (this != &other) {
    destroy();
    move_from(other);
  }
  return *this;
}

Key::~Key() {
  destroy();
}

// Precondition: *this holds no fields. On a throwing copy the fields made so far are undone.
void Key::copy_from(std::span<const Field> fields) {
  if (fields.size() > inline_fields) {
    heap_.assign(fields.begin(), fields.end());
    size_ = fields.size();
    return;
  }
  try {
    for (; size_ < fields.size(); ++size_) std::construct_at(&inline_.fields[size_], fields[size_]);
  } catch (...) {
    destroy();
    throw;
  }
}

// Precondition: *this holds no fields. Leaves other as Key{}.
void Key::move_from(Key& other) noexcept {
  if (other.on_heap()) {
    heap_ = std::move(other.heap_);
  } else {
    for (std::size_t i = 0; i < other.size_; ++i)
      std::construct_at(&inline_.fields[i], std::move(other.inline_.fields[i]));
  }
  size_ = other.size_;
  digest_ = other.digest_;
  other.destroy();
  other.digest_ = kEmptyDigest;
}

void Key::destroy() noexcept {
  if (on_heap())
    heap_ = {};
  else
    std::destroy_n(inline_.fields, size_);
  size_ = 0;
}

bool operator==(const Key& a, const Key& b) {
  const auto x = a.fields();
  const auto y = b.fields();
  return std::equal(x.begin(), x.end(), y.begin(), y.end());
}

const Value* Key::find(std::string_view name) const {
  for (const auto& f : fields())
    if (f.name == name) return &f.value;
  return nullptr;
}

const Value& Key::operator[](std::string_view name) const {
  if (const Value* v = find(name)) return *v;
  throw UsageError("key has no field '" + std::string(name) + "' (it is " + text() + ")");
}

std::string Key::encode() const {
  std::string out;
  StringSink sink{out};
  encode_to(fields(), sink);
  return out;
}

std::string Key::text() const {
  const auto view = fields();
  return detail::fields_text(std::vector<Field>(view.begin(), view.end()));
}
Key Key::parse(std::string_view text) {
  return Key(detail::parse_fields(text));
}

}  // namespace tunekit

namespace tunekit {

void KeyValues::too_many() {
  throw UsageError("a typed key holds at most " + std::to_string(capacity) +
                   " values; declare a key with more fields as a Key (Op::key(fn))");
}

void KeyValues::text_too_long(std::string_view text) {
  throw UsageError("the typed key value '" + std::string(text) + "' is longer than " +
                   std::to_string(max_text) +
                   " characters; declare a key with long strings as a Key (Op::key(fn))");
}

void KeyValues::unsigned_too_large(std::uint64_t v) {
  throw UsageError("the typed key value " + std::to_string(v) +
                   " is above INT64_MAX: key integers are signed 64-bit");
}

KeyValues& KeyValues::add_value(const Value& v) {
  switch (v.type()) {
    case Value::Type::integer:
      return add(v.as_int());
    case Value::Type::real:
      return add(v.as_real());
    case Value::Type::boolean:
      return add(v.as_bool());
    case Value::Type::string:
      return add_text(v.as_string());
  }
  return *this;
}

Value KeyValues::value(std::size_t i) const {
  if (i >= size_) throw UsageError("typed key value " + std::to_string(i) + " does not exist");
  std::size_t at = 1;  // walk the tags: a value takes one word, a string its characters' words
  auto tag_of = [&](std::size_t j) { return (words_[0] >> (8 * j)) & 0xff; };
  auto words_of = [&](std::uint64_t tag) {
    const auto type = static_cast<Value::Type>((tag & 7) - 1);
    return type == Value::Type::string ? ((tag >> 3) + 7) / 8 : 1;
  };
  for (std::size_t j = 0; j < i; ++j) at += words_of(tag_of(j));
  const std::uint64_t tag = tag_of(i);
  const auto type = static_cast<Value::Type>((tag & 7) - 1);
  const std::uint64_t bits = words_[at];
  switch (type) {
    case Value::Type::integer:
      return Value(static_cast<std::int64_t>(bits));
    case Value::Type::real:
      return Value(std::bit_cast<double>(bits));
    case Value::Type::boolean:
      return Value(bits != 0);
    case Value::Type::string:
      return Value(std::string(reinterpret_cast<const char*>(words_ + at), tag >> 3));
  }
  return Value();
}

Digest KeyValues::digest(const Digest& names) const {
  const XXH128_hash_t h = XXH3_128bits_withSeed(words_, used_ * 8, names.low);
  return Digest{h.high64 ^ names.high, h.low64};
}

}  // namespace tunekit
