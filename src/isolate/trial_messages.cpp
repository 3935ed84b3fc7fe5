#include "isolate/trial_messages.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tunekit::detail {
namespace {

constexpr std::uint32_t kMagic = 0x746b7463;    // "tktc" (validation_call_clean: was "tktb")
constexpr std::uint32_t kRequest = 0x746b7472;  // "tktr"
constexpr std::uint32_t kSetup = 0x746b7473;    // "tkts"
constexpr std::uint64_t kMaxItems = 1u << 24;

class Writer {
 public:
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put(const std::string& s) {
    put<std::uint64_t>(s.size());
    out_ += s;
  }
  void put(const Outcome& o) {
    put<std::int32_t>(static_cast<std::int32_t>(o.status));
    put(o.message);
  }
  void put(const TimingResult& t) {
    put(t.outcome);
    put<std::int32_t>(static_cast<std::int32_t>(t.mode));
    put(t.clock);
    put<std::uint64_t>(t.samples.size());
    for (double s : t.samples) put(s);
    for (double v : {t.min, t.median, t.mean, t.mad, t.p10, t.p90}) put(v);
    put<std::int32_t>(t.depth);
    put<std::int64_t>(t.dispatches);
    put<std::uint64_t>(t.probes.size());
    for (const DepthProbe& p : t.probes) put<std::int32_t>(p.depth), put(p.seconds);
    put(t.stalled_fraction);
    put<std::uint8_t>(t.contended);
    put<std::int32_t>(t.retaken);
    put<std::int32_t>(t.waited);
    put<std::int32_t>(t.clean);
    put(t.wall_seconds);
  }
  void put(const std::optional<TimingResult>& t) {
    put<std::uint8_t>(t.has_value());
    if (t) put(*t);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == in_.size(); }
  template <class T>
  T get() {
    T v{};
    if (!ok_ || in_.size() - pos_ < sizeof v) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, in_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string text() {
    const auto n = get<std::uint64_t>();
    if (!ok_ || n > in_.size() - pos_) {
      ok_ = false;
      return {};
    }
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  Outcome outcome() {
    const auto status = get<std::int32_t>();
    Outcome o;
    if (status < 0 || status > static_cast<std::int32_t>(Status::device_lost)) ok_ = false;
    o.status = static_cast<Status>(status);
    o.message = text();
    return o;
  }
  // An element count that the bytes left can hold (each element at least `size` bytes).
  std::uint64_t count(std::size_t size) {
    const auto n = get<std::uint64_t>();
    if (n > kMaxItems || n > (in_.size() - pos_) / size) ok_ = false;
    return ok_ ? n : 0;
  }
  TimingResult timing() {
    TimingResult t;
    t.outcome = outcome();
    const auto mode = get<std::int32_t>();
    if (mode != static_cast<std::int32_t>(TimingMode::isolated) &&
        mode != static_cast<std::int32_t>(TimingMode::queued))
      ok_ = false;
    t.mode = static_cast<TimingMode>(mode);
    t.clock = text();
    for (std::uint64_t i = 0, n = count(sizeof(double)); i < n; ++i)
      t.samples.push_back(get<double>());
    for (double* v : {&t.min, &t.median, &t.mean, &t.mad, &t.p10, &t.p90}) *v = get<double>();
    t.depth = get<std::int32_t>();
    t.dispatches = get<std::int64_t>();
    for (std::uint64_t i = 0, n = count(sizeof(std::int32_t) + sizeof(double)); i < n; ++i) {
      DepthProbe p;
      p.depth = get<std::int32_t>();
      p.seconds = get<double>();
      t.probes.push_back(p);
    }
    t.stalled_fraction = get<double>();
    t.contended = get<std::uint8_t>() != 0;
    t.retaken = get<std::int32_t>();
    t.waited = get<std::int32_t>();
    t.clean = get<std::int32_t>();
    if (t.retaken < 0 || t.waited < 0 || t.clean < 0) ok_ = false;
    t.wall_seconds = get<double>();
    return t;
  }
  std::optional<TimingResult> maybe_timing() {
    if (get<std::uint8_t>() == 0) return std::nullopt;
    return timing();
  }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace

std::string encode(const TrialRequest& q) {
  Writer w;
  w.put(kRequest);
  w.put(static_cast<std::uint8_t>(q.phase));
  w.put(q.index);
  w.put(q.functions_of);
  w.put<std::uint8_t>(q.built);
  w.put<std::uint8_t>(q.check);
  w.put(q.check_below);
  const TimingOptions& t = q.timing;
  w.put<std::int32_t>(static_cast<std::int32_t>(t.mode));
  for (int v : {t.warmup, t.repeats_floor, t.max_runs, t.depth_cap, t.fixed_depth})
    w.put<std::int32_t>(v);
  for (double v : {t.sample_budget, t.stall_ratio, t.contended_fraction, t.batch_target,
                   t.hopeless_against, t.hopeless_ratio, t.far_behind_ratio,
                   t.clean_far_behind_ratio, t.prior_reading, t.wait_tolerance, t.settle_seconds})
    w.put(v);
  w.put<std::uint8_t>((t.evictor ? 1 : 0) | (t.stop ? 2 : 0) | (t.on_call ? 4 : 0) |
                      (q.stopped ? 8 : 0) | (t.retake_waited ? 16 : 0) |
                      (q.validate_more ? 32 : 0));
  w.put(q.stop_after_seconds);
  w.put(q.more_sets_over);
  w.put(q.lone_cut_over);
  w.put(q.wait_tolerance);
  return w.take();
}

std::optional<TrialRequest> decode_trial_request(std::string_view bytes) {
  Reader r(bytes);
  if (r.get<std::uint32_t>() != kRequest) return std::nullopt;
  TrialRequest q;
  const auto phase = r.get<std::uint8_t>();
  if (phase > static_cast<std::uint8_t>(TrialRequest::Phase::window)) return std::nullopt;
  q.phase = static_cast<TrialRequest::Phase>(phase);
  q.index = r.get<std::uint64_t>();
  q.functions_of = r.get<std::uint64_t>();
  q.built = r.get<std::uint8_t>() != 0;
  q.check = r.get<std::uint8_t>() != 0;
  q.check_below = r.get<double>();
  if (!(q.check_below >= 0)) return std::nullopt;  // NaN or negative: damaged
  TimingOptions& t = q.timing;
  t.mode = r.get<std::int32_t>() == 1 ? TimingMode::queued : TimingMode::isolated;
  for (int* v : {&t.warmup, &t.repeats_floor, &t.max_runs, &t.depth_cap, &t.fixed_depth})
    *v = r.get<std::int32_t>();
  for (double* v :
       {&t.sample_budget, &t.stall_ratio, &t.contended_fraction, &t.batch_target,
        &t.hopeless_against, &t.hopeless_ratio, &t.far_behind_ratio, &t.clean_far_behind_ratio,
        &t.prior_reading, &t.wait_tolerance, &t.settle_seconds})
    *v = r.get<double>();
  const auto has = r.get<std::uint8_t>();
  q.evict = has & 1, q.stop = has & 2, q.on_call = has & 4, q.stopped = has & 8;
  t.retake_waited = has & 16;
  q.validate_more = has & 32;
  q.stop_after_seconds = r.get<double>();
  if (!(q.stop_after_seconds >= 0)) return std::nullopt;  // NaN or negative: damaged
  q.more_sets_over = r.get<double>();                     // +inf: never now
  if (!(q.more_sets_over >= 0)) return std::nullopt;
  q.lone_cut_over = r.get<double>();  // +inf: never
  q.wait_tolerance = r.get<double>();
  if (!(q.lone_cut_over >= 0) || !(q.wait_tolerance >= 0 && std::isfinite(q.wait_tolerance)))
    return std::nullopt;
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return q;
}

std::string encode(const TrialAnswer& answer) {
  Writer w;
  w.put(kMagic);
  w.put(answer.outcome);
  w.put(answer.compile_seconds);
  w.put(answer.validation_call_seconds);
  w.put(answer.validation_more_seconds);
  w.put(answer.timing);
  w.put(answer.settle_seconds);
  w.put<std::uint8_t>((answer.checked ? 1 : 0) | (answer.validated_more ? 2 : 0) |
                      (answer.validation_call_clean ? 4 : 0));
  w.put(answer.fatal);
  return w.take();
}

std::optional<TrialAnswer> decode_trial_answer(std::string_view bytes) {
  Reader r(bytes);
  if (r.get<std::uint32_t>() != kMagic) return std::nullopt;
  TrialAnswer a;
  a.outcome = r.outcome();
  a.compile_seconds = r.get<double>();
  a.validation_call_seconds = r.get<double>();
  a.validation_more_seconds = r.get<double>();
  a.timing = r.maybe_timing();
  a.settle_seconds = r.get<double>();
  if (!(a.settle_seconds >= 0)) return std::nullopt;  // NaN or negative: damaged
  const auto flags = r.get<std::uint8_t>();
  a.checked = flags & 1;
  a.validated_more = flags & 2;
  a.validation_call_clean = flags & 4;
  a.fatal = r.text();
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return a;
}

std::string encode(const TrialSetup& s) {
  Writer w;
  w.put(kSetup);
  for (const std::string* t :
       {&s.backend, &s.device, &s.arch, &s.op, &s.key, &s.checksum, &s.store})
    w.put(*t);
  w.put(s.input_sets);
  w.put(s.rotation_copies);
  w.put(s.check_calls);
  w.put(s.default_index);
  w.put(s.memory_bytes);
  return w.take();
}

std::optional<TrialSetup> decode_trial_setup(std::string_view bytes) {
  Reader r(bytes);
  if (r.get<std::uint32_t>() != kSetup) return std::nullopt;
  TrialSetup s;
  for (std::string* t : {&s.backend, &s.device, &s.arch, &s.op, &s.key, &s.checksum, &s.store})
    *t = r.text();
  s.input_sets = r.get<std::uint32_t>();
  s.rotation_copies = r.get<std::uint32_t>();
  s.check_calls = r.get<std::int32_t>();
  s.default_index = r.get<std::uint64_t>();
  s.memory_bytes = r.get<std::uint64_t>();
  if (!r.ok() || !r.at_end()) return std::nullopt;
  return s;
}

}  // namespace tunekit::detail
