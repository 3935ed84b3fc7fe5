#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "store/store_registry.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/store.hpp"

namespace tunekit {
namespace {

constexpr long kMaxWaitMs = 600000;  // ten minutes: more is a typo, not a wish

long wait_ms(std::string_view text, std::string_view whole) {
  long ms = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (error != std::errc() || end != text.data() + text.size() || ms < 0 || ms > kMaxWaitMs) {
    throw UsageError("TUNEKIT_STORE_WAIT_MS='" + std::string(whole) +
                     "': give milliseconds to wait for a locked store, READ or READ,WRITE, each "
                     "0 to 600000 (e.g. 2000 or 2000,5000)");
  }
  return ms;
}

// Field 22 of /proc/PID/stat (the start time in clock ticks since boot); "" when unreadable.
std::string start_of(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return "";
  const auto name_end = line.rfind(')');  // the command name may hold spaces and ')'
  std::istringstream fields(name_end == std::string::npos ? "" : line.substr(name_end + 1));
  std::string field;
  for (int n = 3; fields >> field; ++n)
    if (n == 22) return field;
  return "";
}

// When this process started, so that a pid the system reused names another holder: the
// start time in clock ticks since boot (/proc/self/stat, field 22), else the unix milliseconds
// of the first call (taken once: the same for every lease of this process).
// Which kernel boot and pid namespace this process's pids belong to: the first 8 characters
// of /proc/sys/kernel/random/boot_id and the inode of /proc/self/ns/pid ("" unreadable). Two
// machines of one host name, a reboot, or containers sharing a host name but not their pids
// differ here, so a holder's pid is judged only where it means the same process.
std::string pid_space() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(boot, id);
  std::error_code ec;
  const std::string ns = std::filesystem::read_symlink("/proc/self/ns/pid", ec).string();
  if (id.size() < 8 || ec || ns.empty()) return "";
  const auto open = ns.find('['), close = ns.find(']');
  if (open == std::string::npos || close == std::string::npos || close <= open + 1) return "";
  return id.substr(0, 8) + "-" + ns.substr(open + 1, close - open - 1);
}

// When this process started, so that a pid the system reused names another holder:
// "<pid space>.<start in clock ticks since boot>" (/proc/self/stat, field 22), else "t" and
// the unix milliseconds of the first call (taken once: the same for every lease of this
// process; such a holder is never judged gone).
std::string process_start() {
  const std::string space = pid_space();
  if (std::string start = start_of("self"); !start.empty() && !space.empty())
    return space + "." + start;
  static const auto first_call = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
  return "t" + std::to_string(first_call);
}

std::string host_name() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "unknown-host";
  return name.data();
}

}  // namespace

std::string_view to_string(LeaseState state) {
  switch (state) {
    case LeaseState::held:
      return "held";
    case LeaseState::busy:
      return "busy";
    case LeaseState::unavailable:
      return "unavailable";
  }
  return "unknown";
}

bool lease_holder_is_gone(std::string_view holder) {
  // host:pid:start:n, read from the right (a host name holds no ':').
  std::vector<std::string> parts;
  std::string rest(holder);
  for (int i = 0; i < 3; ++i) {
    const auto colon = rest.rfind(':');
    if (colon == std::string::npos) return false;
    parts.push_back(rest.substr(colon + 1));
    rest.resize(colon);
  }
  const std::string& start = parts[1];
  const std::string& pid_text = parts[2];
  const auto dot = start.rfind('.');
  if (rest != host_name() || pid_text.empty() || pid_text.size() > 9 ||
      pid_text.find_first_not_of("0123456789") != std::string::npos || dot == std::string::npos ||
      start.substr(0, dot) != pid_space())  // another machine, boot or pid namespace
    return false;
  if (const std::string now = start_of(pid_text); !now.empty())
    return now != start.substr(dot + 1);  // a reused pid names another process
  // Unreadable: gone only when the kernel says no such process (hidden /proc, hidepid, or
  // another user's process: EPERM, alive).
  const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

std::string lease_holder_name(std::uint64_t n) {
  return host_name() + ":" + std::to_string(::getpid()) + ":" + process_start() + ":" +
         std::to_string(n);
}

std::string_view to_string(StoreState state) {
  switch (state) {
    case StoreState::ready:
      return "ready";
    case StoreState::read_only:
      return "read_only";
    case StoreState::none:
      return "none";
    case StoreState::missing:
      return "missing";
    case StoreState::locked:
      return "locked";
    case StoreState::unreadable:
      return "unreadable";
    case StoreState::not_a_store:
      return "not_a_store";
    case StoreState::newer_schema:
      return "newer_schema";
    case StoreState::untrusted:
      return "untrusted";
    case StoreState::not_a_file:
      return "not_a_file";
    case StoreState::not_creatable:
      return "not_creatable";
    case StoreState::unreachable:
      return "unreachable";
  }
  return "unknown";
}

std::string default_store_path(const std::function<const char*(const char*)>& getenv) {
  auto set = [&](const char* name) -> std::string {
    const char* v = getenv(name);
    return v && *v ? v : "";
  };
  std::string dir = set("TUNEKIT_CACHE_DIR");
  if (dir.empty() && !set("XDG_CACHE_HOME").empty()) dir = set("XDG_CACHE_HOME") + "/tunekit";
  if (dir.empty() && !set("HOME").empty()) dir = set("HOME") + "/.cache/tunekit";
  if (dir.empty()) dir = ".tunekit-cache";
  return dir + "/choices.db";
}

StoreOptions store_options_from_environment(const std::function<const char*(const char*)>& getenv) {
  StoreOptions o;
  if (const char* wait = getenv("TUNEKIT_STORE_WAIT_MS"); wait && *wait) {
    const std::string_view text(wait);
    const auto comma = text.find(',');
    o.read_wait = std::chrono::milliseconds(wait_ms(text.substr(0, comma), text));
    o.write_wait = comma == std::string_view::npos
                       ? std::max(o.read_wait, o.write_wait)
                       : std::chrono::milliseconds(wait_ms(text.substr(comma + 1), text));
  }
  if (const char* trust = getenv("TUNEKIT_TRUST_STORE"); trust && *trust) {
    const std::string_view text(trust);
    if (text != "0" && text != "1") {
      throw UsageError("TUNEKIT_TRUST_STORE='" + std::string(text) +
                       "': use 1 to use a store others can write or another user owns, 0 (or "
                       "unset) to refuse it");
    }
    o.trust = text == "1";
  }
  return o;
}

StoreOpening open_store_checked(std::string_view spec, const StoreOptions& options,
                                const WarningSink& warn) {
  const detail::ParsedStoreSpec parsed = detail::parse_store_spec(spec);
  if (!parsed.kind) return {};
  return parsed.kind->open(parsed.location, options, warn);
}

std::string store_spec_from_environment(const std::function<const char*(const char*)>& getenv) {
  if (const char* spec = getenv("TUNEKIT_STORE"); spec && *spec) {
    try {
      detail::parse_store_spec(spec);
    } catch (const UsageError& e) {
      throw UsageError(std::string("TUNEKIT_STORE: ") + e.what());
    }
    return spec;
  }
  return "sqlite:" + default_store_path(getenv);
}

std::string shown_store_spec(std::string_view spec) {
  return detail::mask_password(spec);
}

std::string store_file_of(std::string_view spec) {
  const detail::ParsedStoreSpec parsed = detail::parse_store_spec(spec);
  return parsed.kind && parsed.kind->name == "sqlite" ? parsed.location : std::string();
}

std::unique_ptr<Store> open_store(std::string_view spec, const WarningSink& warn,
                                  const StoreOptions& options) {
  return open_store_checked(spec, options, warn).store;
}

}  // namespace tunekit
