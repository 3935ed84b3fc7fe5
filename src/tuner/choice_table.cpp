#include "tuner/choice_table.hpp"

namespace tunekit::detail {

ChoiceTable::ChoiceTable() {
  snapshots_.push_back(std::make_unique<Snapshot>(64));
  current_.store(snapshots_.back().get(), std::memory_order_release);
}

ChoiceTable::~ChoiceTable() = default;

void ChoiceTable::insert(Snapshot& s, const Digest& op, const Digest& key, std::size_t choice) {
  for (std::size_t i = bucket(op, key) & s.mask;; i = (i + 1) & s.mask) {
    Slot& slot = s.slots[i];
    if (!slot.ready.load(std::memory_order_relaxed)) {
      slot.op = op;
      slot.key = key;
      slot.choice.store(choice, std::memory_order_relaxed);
      slot.ready.store(true, std::memory_order_release);
      ++s.count;
      return;
    }
    if (slot.key == key && slot.op == op) {
      slot.choice.store(choice, std::memory_order_relaxed);
      return;
    }
  }
}

void ChoiceTable::publish(const Digest& op, const Digest& key, std::size_t choice) {
  std::lock_guard lock(write_);
  Snapshot* s = snapshots_.back().get();
  if (2 * (s->count + 1) > s->slots.size()) {
    // Grow: copy into a table twice the size, publish it, keep the old one alive.
    auto bigger = std::make_unique<Snapshot>(s->slots.size() * 2);
    for (const Slot& slot : s->slots)
      if (slot.ready.load(std::memory_order_relaxed))
        insert(*bigger, slot.op, slot.key, slot.choice.load(std::memory_order_relaxed));
    snapshots_.push_back(std::move(bigger));
    s = snapshots_.back().get();
    current_.store(s, std::memory_order_release);
  }
  insert(*s, op, key, choice);
}

std::size_t ChoiceTable::size() const {
  std::lock_guard lock(write_);
  return snapshots_.back()->count;
}

}  // namespace tunekit::detail
