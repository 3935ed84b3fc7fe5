// An op whose candidates misbehave on purpose (issue #12): they crash, hang, allocate without
// bound, throw, scribble, return NaN now and then, spoil their process or clobber their inputs.
// Shared by the isolation tests and the spawned trial worker program they start.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tunekit/op.hpp"

namespace tunekit::testing {

struct IsolationArgs {
  std::vector<float> a, b, out;
};

// Set by a candidate that is correct but leaves its process unfit for the next one.
inline bool process_poisoned = false;

inline void add(IsolationArgs& x) {
  if (process_poisoned) std::abort();
  for (std::size_t i = 0; i < x.out.size(); ++i) x.out[i] = x.a[i] + x.b[i];
}

// Calls counted per process: a worker starts from the host's count at its fork.
inline std::atomic<int> flaky_calls{0};

inline IsolationArgs make_args(const Key& key, int input_set = 0) {
  const auto n = static_cast<std::size_t>(key.integer("n"));
  IsolationArgs x{std::vector<float>(n), std::vector<float>(n), std::vector<float>(n)};
  const float shift = 10.0f * static_cast<float>(input_set);  // a second set, other values
  for (std::size_t i = 0; i < n; ++i)
    x.a[i] = 1.0f + shift + static_cast<float>(i), x.b[i] = 2.0f * static_cast<float>(i);
  return x;
}

// "default" and "good" first, the hostile ones named, "late" last. `name`: the op's name (a
// spawned worker program makes the op again from it: hostile_op_named).
inline std::unique_ptr<Op<IsolationArgs>> hostile_op(const std::vector<std::string>& hostile,
                                                     const std::string& name = "hostile") {
  auto op = std::make_unique<Op<IsolationArgs>>(name, 1);
  op->key_field({"n", Value::Type::integer, "length", std::nullopt, 1, 1 << 20});
  const std::map<std::string, std::function<void(IsolationArgs&)>> all{
      {"segfault",
       [](IsolationArgs& x) {
         add(x);
         *static_cast<volatile int*>(nullptr) = 1;
       }},
      {"abort", [](IsolationArgs&) { std::abort(); }},
      {"hang",
       [](IsolationArgs&) {
         volatile unsigned spin = 0;  // unsigned: wrapping is defined (UBSan stays quiet)
         while (true) spin = static_cast<unsigned>(spin) + 1;
       }},
      {"huge_allocation",
       [](IsolationArgs& x) {
         std::vector<char> huge(std::size_t{1} << 40, 1);  // 1 TiB
         x.out[0] = huge[12345];
       }},
      {"throw_42", [](IsolationArgs&) { throw 42; }},
      {"scribble",
       [](IsolationArgs& x) {
         add(x);
         float* far = x.out.data() + (std::size_t{1} << 36);  // far out of bounds
         for (int i = 0; i < 64; ++i) far[i * 4096] = 1;
       }},
      {"flaky_nan",
       [](IsolationArgs& x) {
         add(x);
         if (flaky_calls.fetch_add(1) % 5 == 4) x.out[3] = std::numeric_limits<float>::quiet_NaN();
       }},
      {"poison_process",
       [](IsolationArgs& x) {
         for (std::size_t i = 0; i < x.out.size(); ++i) x.out[i] = x.a[i] + x.b[i];
         process_poisoned = true;  // right, but every later add() in this process aborts
         volatile int spin = 0;    // slower than the default: it never wins
         while (spin < 60000) spin = static_cast<int>(spin) + 1;
       }},
      {"break_device",  // leaves a marker that makes the next worker's setup fail, and dies
       [](IsolationArgs&) {
         if (const char* marker = std::getenv("TUNEKIT_TEST_BROKEN_DEVICE"))
           std::ofstream(marker) << "broken\n";
         std::abort();
       }},
      {"wrong_on_set_2",  // right on the first input set only (the second's a[0] is 11)
       [](IsolationArgs& x) {
         add(x);
         if (x.a[0] > 5.0f) x.out[0] += 1.0f;
       }},
      {"slow",  // correct, 20 ms a call: a window of it outlasts a small budget
       [](IsolationArgs& x) {
         add(x);
         std::this_thread::sleep_for(std::chrono::milliseconds(20));
       }},
      {"clobber",
       [](IsolationArgs& x) {
         add(x);
         std::fill(x.a.begin(), x.a.end(), 0.0f);  // right once, wrong for every later call
       }},
  };
  op->candidate("default", [](IsolationArgs& x) {
    add(x);
    // Slower than every hostile candidate, so each of them would win if it were not caught.
    volatile int spin = 0;
    while (spin < 20000) spin = static_cast<int>(spin) + 1;
  });
  op->candidate("good", add);
  for (const auto& h : hostile) op->candidate(h, all.at(h));
  op->candidate("late", add);  // correct, measured after every hostile one
  op->default_candidate("default")
      .inputs([](const Key& key, int input_set) { return make_args(key, input_set); })
      .outputs([](IsolationArgs& x) {
        return std::vector<OutputView>{OutputView::of(std::span(x.out))};
      })
      .key([](const IsolationArgs& x) {
        return Key{{"n", static_cast<std::int64_t>(x.out.size())}};
      });
  return op;
}

// The op hostile_op({a, b}, "hostile:a,b") made again from its name (a spawned worker program
// receives only the name); nullptr for any other name.
inline std::unique_ptr<Op<IsolationArgs>> hostile_op_named(const std::string& name) {
  const std::string prefix = "hostile:";
  if (name.rfind(prefix, 0) != 0) return nullptr;
  std::vector<std::string> hostile;
  std::stringstream list(name.substr(prefix.size()));
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) hostile.push_back(item);
  return hostile_op(hostile, name);
}

}  // namespace tunekit::testing
