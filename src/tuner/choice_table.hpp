// The in-memory choice table: the hot path. Readers take no lock: they load the current
// snapshot pointer and probe an open-addressing array whose slots are published with release
// stores. One writer at a time (a mutex) inserts in place or grows into a new snapshot; old
// snapshots are kept until the table dies, so a reader never sees freed memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "tunekit/key.hpp"

namespace tunekit::detail {

class ChoiceTable {
 public:
  ChoiceTable();
  ~ChoiceTable();
  ChoiceTable(const ChoiceTable&) = delete;
  ChoiceTable& operator=(const ChoiceTable&) = delete;

  std::optional<std::size_t> find(const Digest& op, const Digest& key) const {
    const Snapshot* s = current_.load(std::memory_order_acquire);
    for (std::size_t i = bucket(op, key) & s->mask;; i = (i + 1) & s->mask) {
      const Slot& slot = s->slots[i];
      if (!slot.ready.load(std::memory_order_acquire)) return std::nullopt;
      if (slot.key == key && slot.op == op) return slot.choice.load(std::memory_order_relaxed);
    }
  }

  // Inserts or replaces the choice for (op, key).
  void publish(const Digest& op, const Digest& key, std::size_t choice);
  std::size_t size() const;

 private:
  struct Slot {
    std::atomic<bool> ready{false};
    Digest op;
    Digest key;
    std::atomic<std::size_t> choice{0};
  };
  struct Snapshot {
    explicit Snapshot(std::size_t capacity) : slots(capacity), mask(capacity - 1) {}
    std::vector<Slot> slots;
    std::size_t mask;
    std::size_t count = 0;
  };

  static std::size_t bucket(const Digest& op, const Digest& key) {
    return static_cast<std::size_t>(key.low ^ (op.low * 0x9E3779B97F4A7C15ull));
  }
  static void insert(Snapshot& s, const Digest& op, const Digest& key, std::size_t choice);

  std::atomic<const Snapshot*> current_;
  mutable std::mutex write_;
  std::vector<std::unique_ptr<Snapshot>> snapshots_;  // all, for lifetime; back() is current
};

}  // namespace tunekit::detail
