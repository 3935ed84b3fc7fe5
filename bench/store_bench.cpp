// store_bench: what the store costs a fleet (issue #18 "Benchmark"). On one store (a fresh
// SQLite file, or --store SPEC: e.g. a PostgreSQL server), KEYS keys of a tiny CPU op are
// tuned once; then CLIENTS threads, each with its own Tuner (its own connection, an empty
// memory table), serve every key once in mode cached: each select misses memory, reads the
// store and validates the stored winner once, as the first call of a key in a new process
// does; then the store read alone (Store::find by digest, each client its own connection);
// then the latency of one tuning lease take + release (distinct identities, one thread).
//   ./bin/store_bench [--store SPEC] [--keys 400] [--clients 8] [--leases 1000]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "tunekit/cpu.hpp"
#include "tunekit/op.hpp"
#include "tunekit/store.hpp"
#include "tunekit/tuner.hpp"

namespace {

using namespace tunekit;
using Steady = std::chrono::steady_clock;

struct Tiny {
  long n = 0;
  std::vector<float> out;
};

void fill_loop(Tiny& t) {
  for (float& x : t.out) x = 1.0f;
}
void fill_assign(Tiny& t) {
  t.out.assign(t.out.size(), 1.0f);
}

std::unique_ptr<Op<Tiny>> make_op() {
  auto op = std::make_unique<Op<Tiny>>("bench_store_tiny", 1);
  op->key([](const Tiny& t) {
      return Key{{"n", t.n}};
    })
      .inputs([](const Key& k) {
        return Tiny{k.integer("n"), std::vector<float>(16)};
      })
      .outputs([](Tiny& t) { return std::vector{OutputView::of(std::span<float>(t.out))}; })
      .candidate("fill_loop", fill_loop)
      .candidate("fill_assign", fill_assign)
      .default_candidate("fill_loop");
  return op;
}

double seconds_since(Steady::time_point start) {
  return std::chrono::duration<double>(Steady::now() - start).count();
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec;
  int keys = 400, clients = 8, leases = 1000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--store")
      spec = argv[i + 1];
    else if (flag == "--keys")
      keys = std::atoi(argv[i + 1]);
    else if (flag == "--clients")
      clients = std::atoi(argv[i + 1]);
    else if (flag == "--leases")
      leases = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr,
                   "usage: store_bench [--store SPEC] [--keys N] [--clients N] [--leases N]\n");
      return 2;
    }
  }
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tunekit-store-bench-" + std::to_string(::getpid()));
  if (spec.empty()) spec = "sqlite:" + (dir / "choices.db").string();
  cpu::CpuDevice device;
  TunerOptions options;
  options.persist.store = spec;
  options.persist.lock_dir = "none";
  options.hooks.log = Log::warnings_to([](std::string_view m) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(m.size()), m.data());
  });
  {
    auto op = make_op();
    Tuner filler(device, options);
    const auto start = Steady::now();
    for (int n = 1; n <= keys; ++n) filler.select(*op, Key{{"n", n}});
    std::printf("store %s: %d keys tuned in %.2f s\n", shown_store_spec(spec).c_str(), keys,
                seconds_since(start));
  }
  // Every client: its own Tuner and op, mode cached, each key once (a memory miss each).
  TunerOptions serving = options;
  serving.decide.mode = Mode::cached;
  std::atomic<int> not_from_store{0};
  std::vector<std::thread> threads;
  const auto start = Steady::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      auto op = make_op();
      Tuner tuner(device, serving);
      for (int i = 0; i < keys; ++i) {
        const int n = 1 + (i + c * keys / clients) % keys;
        if (tuner.select(*op, Key{{"n", n}}).source != Source::cache_replay) ++not_from_store;
      }
    });
  }
  for (auto& t : threads) t.join();
  const double served = seconds_since(start);
  const double selects = static_cast<double>(keys) * clients;
  std::printf("%d clients x %d selects served from the store: %.0f selects/s (%.1f us each)%s\n",
              clients, keys, selects / served, served / selects * 1e6,
              not_from_store ? " -- SOME NOT FROM THE STORE" : "");
  auto warn = [](std::string_view m) {
    std::fprintf(stderr, "%.*s\n", static_cast<int>(m.size()), m.data());
  };
  auto store = open_store(spec, warn);
  if (!store) return 1;
  // The store read alone: each client its own connection, every entry once by digest.
  std::vector<std::string> digests;
  for (const StoredChoice& c : store->list("bench_store_tiny"))
    digests.push_back(c.identity_digest);
  std::atomic<int> not_found{0};
  threads.clear();
  const auto read_start = Steady::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      auto own = open_store(spec, warn);
      for (const std::string& d : digests)
        if (!own || !own->find(d)) ++not_found;
    });
  }
  for (auto& t : threads) t.join();
  const double read = seconds_since(read_start);
  const double reads = static_cast<double>(digests.size()) * clients;
  std::printf("%d clients x %zu finds (the store read alone): %.0f reads/s (%.1f us each)%s\n",
              clients, digests.size(), reads / read, read / reads * 1e6,
              not_found ? " -- SOME NOT FOUND" : "");
  // Lease take + release, one thread, distinct identities.
  std::vector<double> take_us, release_us;
  for (int i = 0; i < leases; ++i) {
    TuningLease wanted;
    wanted.identity_digest = "bench" + std::to_string(i);
    wanted.op = "bench";
    wanted.key = "n=" + std::to_string(i);
    wanted.holder = lease_holder_name(1);
    auto t0 = Steady::now();
    const LeaseTaking taking = store->take_lease(wanted, std::chrono::seconds(30));
    take_us.push_back(seconds_since(t0) * 1e6);
    if (taking.state != LeaseState::held) {
      std::fprintf(stderr, "lease %d not held: %s\n", i, taking.why.c_str());
      return 1;
    }
    t0 = Steady::now();
    store->release_lease(wanted.identity_digest, wanted.holder);
    release_us.push_back(seconds_since(t0) * 1e6);
  }
  std::printf(
      "lease take: median %.0f us, p99 %.0f us; release: median %.0f us, p99 %.0f us (%d)\n",
      quantile(take_us, 0.5), quantile(take_us, 0.99), quantile(release_us, 0.5),
      quantile(release_us, 0.99), leases);
  std::filesystem::remove_all(dir);
  return not_from_store || not_found ? 1 : 0;
}
