// What a hostile user leaves where tunekit reads or writes: FIFOs, device nodes, gzip bombs;
// and a guard that turns a call that blocks into a test failure instead of a hung suite.
#pragma once

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

namespace tunekit::testing {

// The message of the std::exception `f` throws, "" when it returns, "blocked" when it has not
// finished within `limit` (its thread is left behind: it cannot be cancelled, and the test has
// failed anyway). `f` must own what it uses (capture by value).
inline std::string error_within(std::chrono::seconds limit, std::function<void()> f) {
  auto task = std::make_shared<std::packaged_task<std::string()>>([f] {
    try {
      f();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string();
  });
  auto result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(limit) != std::future_status::ready) return "blocked";
  return result.get();
}

// A character device like /dev/full made at `p` (never touch the real /dev: a regression must
// not damage the machine); a socket stands in where mknod is not permitted. False on failure.
inline bool make_special_file(const std::filesystem::path& p) {
  if (::mknod(p.c_str(), S_IFCHR | 0600, ::makedev(1, 7)) == 0) return true;
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", p.c_str());
  const bool bound = ::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(s);
  return bound;
}

inline std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// gzip of `head` followed by `zeros` zero bytes, deflated a chunk at a time: a bomb of any
// inflated size without ever holding it inflated.
inline std::string gzipped_zeros(std::size_t zeros, const std::string& head = "") {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  const std::string chunk(1 << 20, '\0');
  std::string out;
  char buffer[1 << 16];
  auto pump = [&](const std::string& in, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    do {
      z.next_out = reinterpret_cast<Bytef*>(buffer);
      z.avail_out = sizeof buffer;
      deflate(&z, flush);
      out.append(buffer, sizeof buffer - z.avail_out);
    } while (z.avail_out == 0);
  };
  pump(head, Z_NO_FLUSH);
  for (std::size_t done = 0; done < zeros; done += chunk.size()) pump(chunk, Z_NO_FLUSH);
  pump("", Z_FINISH);
  deflateEnd(&z);
  return out;
}

}  // namespace tunekit::testing
