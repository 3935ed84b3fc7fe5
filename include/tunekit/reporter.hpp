// Reporters render a TuneReport, a ModelReport (`tune --model`, `explain`), or stored choices
// (`tunekit cache ls` and `cache show`), or a stack workload's decisions, to a stream. Found by
// name ("console", "json", "html").
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/model_report.hpp"
#include "tunekit/report.hpp"
#include "tunekit/store.hpp"
#include "tunekit/terminal_text.hpp"  // reporters escape outside strings with it

namespace tunekit {

// The stored choices of a store, one line each (`cache ls`).
struct StoredChoiceList {
  std::string store;      // the store's spec, e.g. "sqlite:/home/u/.cache/tunekit/choices.db"
  std::string op;         // the op they were filtered by (empty: every op)
  std::string read_only;  // why the store is read-only (empty: it is writable)
  std::vector<StoredChoice> choices;
};

// One stored choice in full (`cache show`): the entry and the candidates banned for it.
struct StoredChoiceDetail {
  StoredChoice choice;
  std::vector<BannedCandidate> bans;
};

// The misses recorded for `tunekit tune --pending` (`cache ls --pending`).
struct PendingMissList {
  std::string store;  // the store's spec
  std::string op;     // the op they were filtered by (empty: every op)
  std::vector<PendingMiss> misses;
};

// `tunekit report`: stored decisions (a fleet view, one row per key, then a section per
// decision) with the cost model's view of those it could rank. Only the "html" reporter
// writes it; the others answer a UsageError naming it.
struct DecisionsReport {
  StoredChoiceList list;
  // The cost model's ranking of entries of `list` (matched by op and key); may be fewer.
  std::vector<ModelReport> models;
  std::string models_note;  // why entries have no model scores ("no device profile: ...")
};

struct PendingOutcome;    // tunekit/pending.hpp
struct StoreSyncSummary;  // tunekit/store_sync.hpp
namespace stack {
struct StackSummary;  // tunekit/stack_summary.hpp
}

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void write(const TuneReport& report, std::ostream& out) = 0;
  virtual void write(const ModelReport& report, std::ostream& out) = 0;
  virtual void write(const StoredChoiceList& list, std::ostream& out) = 0;
  virtual void write(const std::vector<StoredChoiceDetail>& shown, std::ostream& out) = 0;
  virtual void write(const PendingMissList& list, std::ostream& out) = 0;
  // `tune --pending`: one record's outcome as it happens (console: a line; json: nothing, the
  // list holds it), then every outcome (console: a summary line; json: an array).
  virtual void write(const PendingOutcome& outcome, std::ostream& out) = 0;
  virtual void write(const std::vector<PendingOutcome>& outcomes, std::ostream& out) = 0;
  // `tunekit stack tune|explain`: the kernel decisions under a stack workload and each
  // higher level's decision with its paired scores and dependencies.
  virtual void write(const stack::StackSummary& summary, std::ostream& out) = 0;
  // `tunekit cache push|pull`: what a copy between two stores did, or would do.
  virtual void write(const StoreSyncSummary& summary, std::ostream& out) = 0;
  // `tunekit report` (html only; the default is a UsageError saying so). Its own name, so the
  // reporters that do not write it need not unhide it.
  virtual void write_decisions(const DecisionsReport& report, std::ostream& out);
};

// "console" (a table), "json" or "html" (one self-contained page); an unknown name is a UsageError
// listing the known ones.
std::unique_ptr<Reporter> make_reporter(std::string_view name);
std::vector<std::string> reporter_names();

// The JSON text of a report (the object the "json" reporter writes).
std::string to_json(const TuneReport& report, int indent = 2);

// Writes a rendered report (`tune --html FILE`, `report --out FILE`) with the one safe-file
// writer: atomically, never through a symlink, never over a directory or FIFO (UsageError
// naming the path and what sits there; the directory must exist).
void write_report_file(const std::string& path, std::string_view text);

}  // namespace tunekit
