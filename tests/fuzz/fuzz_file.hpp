// For fuzz targets whose parser reads a file: the input written to one scratch file per
// process (in /dev/shm when it exists, so the disk is not worn).
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace tunekit::fuzz {

inline std::filesystem::path scratch_file(const char* suffix) {
  const std::filesystem::path dir =
      std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
  return dir / ("tunekit_fuzz_" + std::to_string(::getpid()) + suffix);
}

inline const std::filesystem::path& write_input(const std::uint8_t* data, std::size_t size,
                                                const char* suffix) {
  static const std::filesystem::path file = scratch_file(suffix);
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file;
}

}  // namespace tunekit::fuzz
