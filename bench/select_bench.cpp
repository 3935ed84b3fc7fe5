// select_bench: what a caller pays on a hit (DESIGN §7, issue #13 "the real hot path").
// Tuner::run(op, args) with a typed key (Op::key(names, values)) hashes the raw values, reads
// the hot index and calls the candidate, on every call; with a Key function it builds and
// hashes the Key instead. Beside them: select() with a key built once, the key alone, the
// candidate alone, the floor of a typed key (raw values hashed, the same table, no API), and
// the cache many tuners use (CubeCL-style: the key's text built per call, a mutex, an
// unordered_map lookup). Every benchmark counts heap allocations per
// call (a counting global operator new). Goals: run's overhead on a hit <= 25 ns including the
// key, zero allocations, >= 5x faster than the mutex map, at 1 and 2 threads.
//
//   ./bin/select_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   ./bin/select_bench --check-allocations ...   exit 1 when a hit allocates (the ctest smoke)
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <xxhash.h>

#include "tunekit/cpu.hpp"
#include "tunekit/op.hpp"
#include "tunekit/tuner.hpp"
#include "tuner/choice_table.hpp"

namespace {
// This thread's heap allocations: each benchmark thread counts its own calls only.
thread_local long allocations = 0;
}  // namespace

// GCC's -Wmismatched-new-delete misreads free() in a replaced delete as freeing new's memory.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) {
  ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}

namespace {

// A workload with a realistic key (a GEMM's) and trivial candidates: the dispatch dominates.
struct Tiny {
  long m = 0, n = 0, k = 0;
  std::vector<float> out;
};

tunekit::Key key_of(const Tiny& t) {
  return tunekit::Key{{"m", t.m}, {"n", t.n}, {"k", t.k}, {"dtype", "f32"}};
}
// The same key, typed: the names once, the values per call.
tunekit::KeyValues values_of(const Tiny& t) {
  return tunekit::KeyValues{t.m, t.n, t.k, "f32"};
}

void fill_loop(Tiny& t) {
  for (float& x : t.out) x = 1.0f;
}
void fill_assign(Tiny& t) {
  t.out.assign(t.out.size(), 1.0f);
}

Tiny make_args() {
  return Tiny{4096, 4096, 4096, std::vector<float>(16)};
}

// Two tuned ops, shared by every benchmark thread (built once, thread-safely): `op` with the
// typed key, `keyed` with the same key from a Key function.
struct HitFixture {
  tunekit::cpu::CpuDevice device;
  tunekit::Tuner tuner{device, options()};
  tunekit::Op<Tiny> op{"bench_tiny", 1};
  tunekit::Op<Tiny> keyed{"bench_tiny_keyed", 1};
  tunekit::Key key = key_of(make_args());
  std::string error;

  static tunekit::TunerOptions options() {
    tunekit::TunerOptions o;
    o.decide.mode = tunekit::Mode::tune;  // whatever TUNEKIT_MODE says: fill the table once
    return o;
  }

  HitFixture() {
    op.key({"m", "n", "k", "dtype"}, values_of);
    keyed.key(key_of);
    for (tunekit::Op<Tiny>* o : {&op, &keyed}) {
      o->inputs([](const tunekit::Key& k) {
         return Tiny{k.integer("m"), k.integer("n"), k.integer("k"), std::vector<float>(16)};
       })
          .outputs(
              [](Tiny& t) { return std::vector{tunekit::OutputView::of(std::span<float>(t.out))}; })
          .candidate("fill_loop", fill_loop)
          .candidate("fill_assign", fill_assign)
          .default_candidate("fill_loop");
      tunekit::TuneReport first;
      tuner.select(*o, key, &first);  // the one search
      tunekit::TuneReport again;
      tuner.select(*o, key, &again);
      if (again.source != tunekit::Source::memory_hit) {
        error = "the second select was not a memory hit (source " +
                std::string(tunekit::to_string(again.source)) + ")";
      }
    }
    if (!(op.key_of(make_args()) == key)) error = "the typed key is not the Key function's";
  }
};

HitFixture& hit_fixture() {
  static HitFixture fixture;
  return fixture;
}

// Reports this thread's allocations per call (summed over threads, divided by all calls).
class AllocationCount {
 public:
  explicit AllocationCount(benchmark::State& state) : state_(state), before_(allocations) {}
  ~AllocationCount() {
    state_.counters["allocs"] = benchmark::Counter(static_cast<double>(allocations - before_),
                                                   benchmark::Counter::kAvgIterations);
  }

 private:
  benchmark::State& state_;
  long before_;
};

void BM_run_hit(benchmark::State& state) {
  HitFixture& f = hit_fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  Tiny args = make_args();
  AllocationCount count(state);
  for (auto _ : state) {
    f.tuner.run(f.op, args);
    benchmark::DoNotOptimize(args.out.data());
  }
}
BENCHMARK(BM_run_hit)->Threads(1)->Threads(2);

// run with the Key built from the arguments per call (an op declared with a Key function).
void BM_run_key_fn_hit(benchmark::State& state) {
  HitFixture& f = hit_fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  Tiny args = make_args();
  AllocationCount count(state);
  for (auto _ : state) {
    f.tuner.run(f.keyed, args);
    benchmark::DoNotOptimize(args.out.data());
  }
}
BENCHMARK(BM_run_key_fn_hit)->Threads(1)->Threads(2);

void BM_select_hit(benchmark::State& state) {
  HitFixture& f = hit_fixture();
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  AllocationCount count(state);
  for (auto _ : state) {
    tunekit::Choice choice = f.tuner.select(f.op, f.key);
    benchmark::DoNotOptimize(choice);
  }
}
BENCHMARK(BM_select_hit)->Threads(1)->Threads(2);

void BM_key_of_args(benchmark::State& state) {
  HitFixture& f = hit_fixture();
  Tiny args = make_args();
  AllocationCount count(state);
  for (auto _ : state) {
    benchmark::DoNotOptimize(&args);
    tunekit::Key key = f.keyed.key_of(args);
    benchmark::DoNotOptimize(key.digest());
  }
}
BENCHMARK(BM_key_of_args)->Threads(1)->Threads(2);

// What a typed run hashes instead: the values from the arguments and their hot digest.
void BM_hot_digest_of_args(benchmark::State& state) {
  HitFixture& f = hit_fixture();
  Tiny args = make_args();
  AllocationCount count(state);
  for (auto _ : state) {
    benchmark::DoNotOptimize(&args);
    const tunekit::Digest d = f.op.hot_digest(f.op.key_values(args));
    benchmark::DoNotOptimize(d);
  }
}
BENCHMARK(BM_hot_digest_of_args)->Threads(1)->Threads(2);

// The candidate with no dispatch at all: run's overhead is BM_run_hit minus this.
void BM_candidate_alone(benchmark::State& state) {
  Tiny args = make_args();
  AllocationCount count(state);
  for (auto _ : state) {
    benchmark::DoNotOptimize(&args);
    fill_loop(args);
    benchmark::DoNotOptimize(args.out.data());
  }
}
BENCHMARK(BM_candidate_alone)->Threads(1)->Threads(2);

// The floor a typed key could reach: the raw values hashed (the names fixed per op, no text,
// no Field), the same choice table probed, the candidate called. Not an API: what run would
// cost without building a Key per call.
struct TypedFloorFixture {
  tunekit::detail::ChoiceTable table;
  tunekit::Digest op = tunekit::Digest::of("bench_tiny");
  static tunekit::Digest digest_of(const Tiny& t) {
    const std::int64_t raw[] = {t.m, t.n, t.k, /*dtype=f32*/ 1};
    const XXH128_hash_t h = XXH3_128bits(raw, sizeof raw);
    return tunekit::Digest{h.high64, h.low64};
  }
  TypedFloorFixture() { table.publish(op, digest_of(make_args()), 0); }
};

void BM_typed_key_floor(benchmark::State& state) {
  static TypedFloorFixture f;
  static constexpr void (*candidates[])(Tiny&) = {fill_loop, fill_assign};
  Tiny args = make_args();
  AllocationCount count(state);
  for (auto _ : state) {
    benchmark::DoNotOptimize(&args);
    candidates[f.table.find(f.op, TypedFloorFixture::digest_of(args)).value_or(0)](args);
    benchmark::DoNotOptimize(args.out.data());
  }
}
BENCHMARK(BM_typed_key_floor)->Threads(1)->Threads(2);

// The baseline: one mutex around an unordered_map keyed by the key's text.
struct MutexMapFixture {
  std::mutex mutex;
  std::unordered_map<std::string, std::size_t> table;
  std::vector<void (*)(Tiny&)> candidates{fill_loop, fill_assign};

  static std::string text_of(const Tiny& t) {  // what a user writes: the fields, formatted
    return fmt::format("m={},n={},k={},dtype={}", t.m, t.n, t.k, "f32");
  }
  MutexMapFixture() {
    table.emplace(text_of(make_args()), 0);
    for (int i = 0; i < 64; ++i) table.emplace(fmt::format("m={}", i), 1);
  }
};

MutexMapFixture& mutex_map_fixture() {
  static MutexMapFixture fixture;
  return fixture;
}

// Like run: the key's text built from the arguments, looked up, the candidate called.
void BM_mutex_map_run(benchmark::State& state) {
  MutexMapFixture& f = mutex_map_fixture();
  Tiny args = make_args();
  AllocationCount count(state);
  for (auto _ : state) {
    benchmark::DoNotOptimize(&args);
    const std::string key = MutexMapFixture::text_of(args);
    std::size_t index = 0;
    {
      std::lock_guard lock(f.mutex);
      index = f.table.find(key)->second;
    }
    f.candidates[index](args);
    benchmark::DoNotOptimize(args.out.data());
  }
}
BENCHMARK(BM_mutex_map_run)->Threads(1)->Threads(2);

// Like select: the key's text built once.
void BM_mutex_map_hit(benchmark::State& state) {
  MutexMapFixture& f = mutex_map_fixture();
  const std::string key = MutexMapFixture::text_of(make_args());
  AllocationCount count(state);
  for (auto _ : state) {
    std::size_t index = 0;
    {
      std::lock_guard lock(f.mutex);
      index = f.table.find(key)->second;
    }
    benchmark::DoNotOptimize(index);
  }
}
BENCHMARK(BM_mutex_map_hit)->Threads(1)->Threads(2);

// Per (benchmark, threads): wall ns per call on each calling thread, CPU ns per call, allocs.
struct Reading {
  double wall_ns = 0;
  double cpu_ns = 0;
  double allocs = 0;
};

// The console table, plus the readings kept for the summary (the median when repeated).
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool aggregate = run.run_type == Run::RT_Aggregate;
      if (aggregate && run.aggregate_name != "median") continue;
      auto& slot = readings_[{run.run_name.function_name, run.threads}];
      if (!aggregate && slot.second) continue;  // a median already stands
      // Google Benchmark divides wall time by the calls of all threads: per thread, multiply.
      const double threads = static_cast<double>(run.threads);
      auto allocs = run.counters.find("allocs");
      slot.first = Reading{run.GetAdjustedRealTime() * threads, run.GetAdjustedCPUTime(),
                           allocs == run.counters.end() ? 0.0 : allocs->second.value};
      slot.second = aggregate;
    }
  }

  const Reading* find(const std::string& name, long threads) const {
    auto it = readings_.find({name, threads});
    return it == readings_.end() ? nullptr : &it->second.first;
  }

 private:
  std::map<std::pair<std::string, long>, std::pair<Reading, bool>> readings_;
};

// The table the goals are read from; returns whether any hit allocated.
bool print_summary(const SummaryReporter& r, std::ostream& out) {
  static const std::pair<const char*, const char*> rows[] = {
      {"BM_run_hit", "run(op, args), typed key"},
      {"BM_run_key_fn_hit", "run(op, args), Key function"},
      {"BM_candidate_alone", "the candidate alone"},
      {"BM_select_hit", "select, key built once"},
      {"BM_hot_digest_of_args", "typed values + hot digest"},
      {"BM_key_of_args", "key_of(args) alone"},
      {"BM_typed_key_floor", "typed key floor (not an API)"},
      {"BM_mutex_map_run", "mutex map, key text per call"},
      {"BM_mutex_map_hit", "mutex map, key text once"},
  };
  bool hit_allocates = false;
  out << fmt::format("\n{:<8}{:<32}{:>10}{:>10}{:>10}\n", "threads", "path", "wall ns", "cpu ns",
                     "allocs");
  for (long threads : {1L, 2L}) {
    for (const auto& [name, label] : rows) {
      if (const Reading* x = r.find(name, threads))
        out << fmt::format("{:<8}{:<32}{:>10.1f}{:>10.1f}{:>10.2f}\n", threads, label, x->wall_ns,
                           x->cpu_ns, x->allocs);
    }
    const Reading* run = r.find("BM_run_hit", threads);
    const Reading* alone = r.find("BM_candidate_alone", threads);
    const Reading* map = r.find("BM_mutex_map_run", threads);
    const Reading* select = r.find("BM_select_hit", threads);
    const Reading* keyed = r.find("BM_run_key_fn_hit", threads);
    if (run && alone)
      out << fmt::format("{:<8}{:<32}{:>10.1f}{:>10.1f}   (goal <= 25 ns)\n", threads,
                         "run's overhead", run->wall_ns - alone->wall_ns,
                         run->cpu_ns - alone->cpu_ns);
    if (run && map)
      out << fmt::format("{:<8}{:<32}{:>9.1f}x{:>9.1f}x   (goal >= 5x)\n", threads,
                         "mutex map run / run", map->wall_ns / run->wall_ns,
                         map->cpu_ns / run->cpu_ns);
    for (const Reading* x : {run, keyed, select})
      if (x && x->allocs > 0) hit_allocates = true;
  }
  return hit_allocates;
}

}  // namespace

int main(int argc, char** argv) {
  bool check_allocations = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check-allocations") == 0)
      check_allocations = true;
    else
      args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  const bool hit_allocates = print_summary(reporter, std::cout);
  if (check_allocations && hit_allocates) {
    std::cerr << "select_bench: a hit (run, typed or not, or select) allocated on the heap; the "
                 "hot path must "
                 "not allocate (see docs/performance.md)\n";
    return 1;
  }
  return 0;
}
