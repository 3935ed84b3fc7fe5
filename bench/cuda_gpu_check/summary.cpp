// The summary of a GPU check: gpu-check.json (every number) and gpu-check.md (the same for a
// reader: the date, the device, the command, each check against its goal).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "cuda_gpu_check/gpu_check.hpp"

namespace gpu_check {

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return "PASS";
    case Verdict::miss:
      return "MISS";
    case Verdict::fail:
      return "FAIL";
    case Verdict::error:
      return "ERROR";
    case Verdict::info:
      return "INFO";
    case Verdict::not_run:
      break;
  }
  return "NOT RUN";
}

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TimeBoxes TimeBoxes::of_total(double seconds) {
  // Each check's least useful time (a tuned check must at least make its inputs and CPU
  // references and measure the default and the anchors: 4096^3 takes seconds on the CPU), then
  // what is left shared by weight, 6 % kept for opening the device and writing the summary.
  TimeBoxes b{.validation = 15,
              .timing = 18,
              .sgemm_large = 32,
              .sgemm_medium = 8,
              .sgemm_skinny = 8,
              .softmax = 9,
              .rmsnorm = 9,
              .crash = 15};
  const double least = b.validation + b.timing + b.sgemm() + b.bandwidth() + b.crash;
  const double extra = std::max(0.0, 0.94 * seconds - least);
  b.validation += 0.25 * extra;
  b.timing += 0.2 * extra;
  b.sgemm_large += 0.2 * extra;
  b.sgemm_medium += 0.1 * extra;
  b.sgemm_skinny += 0.1 * extra;
  b.softmax += 0.075 * extra;
  b.rmsnorm += 0.075 * extra;
  return b;
}

TimeBoxes TimeBoxes::scaled(double factor) const {
  TimeBoxes b = *this;
  for (double* box : {&b.validation, &b.timing, &b.sgemm_large, &b.sgemm_medium, &b.sgemm_skinny,
                      &b.softmax, &b.rmsnorm})
    *box *= factor;
  return b;
}

std::string seconds_text(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return "-";
  if (seconds < 1e-3) return fmt::format("{:.2f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.3f} ms", seconds * 1e3);
  return fmt::format("{:.2f} s", seconds);
}

std::string fixed(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  return fmt::format("{:.{}f}", value, decimals);
}

std::string percent(double ratio) {
  if (!std::isfinite(ratio) || ratio <= 0) return "-";
  return fmt::format("{:.1f} %", ratio * 100);
}

std::string clipped(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  return std::string(text.substr(0, limit)) +
         fmt::format("... ({} more characters)", text.size() - limit);
}

namespace {

nlohmann::json device_json(const tunekit::cuda::DeviceInfo& d) {
  return {{"index", d.index},
          {"product", d.identity.product},
          {"vendor", d.identity.vendor},
          {"arch", d.arch()},
          {"sm_count", d.sm_count},
          {"global_memory_bytes", d.global_memory},
          {"l2_bytes", d.l2_bytes},
          {"clock_khz", d.clock_khz},
          {"max_threads_per_block", d.max_threads_per_block},
          {"shared_per_block_optin", d.shared_per_block_optin},
          {"driver", d.identity.driver}};
}

nlohmann::json run_json(const RunInfo& run, const std::vector<CheckResult>& checks) {
  nlohmann::json j = {
      {"format", "tunekit-gpu-check"},
      {"version", 1},
      {"date", run.date},
      {"command", run.command},
      {"argv", run.argv},
      {"quick", run.quick},
      {"seconds_limit", run.seconds_limit},
      {"status", run.status},
      {"message", run.message},
      {"driver",
       {{"loaded", run.driver.loaded},
        {"version", run.driver.version},
        {"message", run.driver.message}}},
      {"nvrtc", run.nvrtc},
      {"device", run.device ? device_json(*run.device) : nlohmann::json(nullptr)},
  };
  nlohmann::json list = nlohmann::json::array();
  nlohmann::json verdicts = nlohmann::json::object();
  for (const CheckResult& c : checks) {
    list.push_back({{"name", c.name},
                    {"title", c.title},
                    {"goal", c.goal},
                    {"verdict", to_string(c.verdict)},
                    {"summary", c.summary},
                    {"seconds", c.seconds},
                    {"data", c.data},
                    {"notes", c.notes}});
    verdicts[c.name] = to_string(c.verdict);
  }
  j["checks"] = std::move(list);
  j["verdicts"] = std::move(verdicts);
  return j;
}

// A table cell: one line, no column separator.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out.empty() ? "-" : out;
}

void table(std::string& md, const std::vector<std::string>& columns,
           const std::vector<std::vector<std::string>>& rows) {
  if (columns.empty()) return;
  std::string head = "|", rule = "|";
  for (const std::string& c : columns) {
    head += " " + cell(c) + " |";
    rule += "---|";
  }
  md += head + "\n" + rule + "\n";
  for (const auto& row : rows) {
    std::string line = "|";
    for (std::size_t i = 0; i < columns.size(); ++i)
      line += " " + cell(i < row.size() ? row[i] : "") + " |";
    md += line + "\n";
  }
  md += "\n";
}

std::string device_line(const RunInfo& run) {
  if (!run.device) return "none";
  const tunekit::cuda::DeviceInfo& d = *run.device;
  return fmt::format("{} ({}, {} SMs, {:.1f} GiB, L2 {:.1f} MiB, {} MHz); {}", d.identity.product,
                     d.arch(), d.sm_count, static_cast<double>(d.global_memory) / (1 << 30),
                     static_cast<double>(d.l2_bytes) / (1 << 20), d.clock_khz / 1000,
                     d.identity.driver);
}

std::string run_markdown(const RunInfo& run, const std::vector<CheckResult>& checks) {
  std::string md = "# CUDA GPU check\n\n";
  md += fmt::format("- Date: {}\n", run.date);
  md += fmt::format("- Command: `{}`\n", run.command);
  if (run.argv != run.command) md += fmt::format("- Program: `{}`\n", run.argv);
  md += fmt::format("- Device: {}\n", device_line(run));
  md += fmt::format("- CUDA driver: {}; NVRTC: {}\n",
                    run.driver.loaded
                        ? fmt::format("{}.{} ({})", run.driver.version / 1000,
                                      run.driver.version % 1000 / 10, run.driver.version)
                        : "not loaded (" + run.driver.message + ")",
                    run.nvrtc.empty() ? "not loaded" : run.nvrtc);
  md += fmt::format("- Mode: {} (time box {:.0f} s)\n", run.quick ? "quick" : "full",
                    run.seconds_limit);
  md +=
      fmt::format("- Status: {}{}\n\n", run.status, run.message.empty() ? "" : ": " + run.message);
  std::vector<std::vector<std::string>> rows;
  for (const CheckResult& c : checks)
    rows.push_back({c.name, c.goal, c.summary, std::string(to_string(c.verdict))});
  table(md, {"Check", "Goal", "Result", "Verdict"}, rows);
  for (const CheckResult& c : checks) {
    md += fmt::format("## {}\n\nGoal: {}\n\n**{}**: {}", c.title, c.goal, to_string(c.verdict),
                      c.summary);
    md += c.seconds > 0 ? fmt::format(" (took {:.1f} s)\n\n", c.seconds) : "\n\n";
    table(md, c.columns, c.rows);
    for (const std::string& n : c.notes) md += "- " + n + "\n";
    if (!c.notes.empty()) md += "\n";
  }
  return md;
}

// Written beside, then renamed over: a reader never sees half a file.
void write_file(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + temporary.string());
  }
  std::filesystem::rename(temporary, path);
}

}  // namespace

void write_summary(const std::filesystem::path& dir, const RunInfo& run,
                   const std::vector<CheckResult>& checks) {
  std::filesystem::create_directories(dir);
  // Outside text (NVRTC logs, driver messages) may not be UTF-8: replaced, never a throw.
  write_file(
      dir / "gpu-check.json",
      run_json(run, checks).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  write_file(dir / "gpu-check.md", run_markdown(run, checks));
}

}  // namespace gpu_check
