// The HTML report in a real browser: headless Chromium (Debian `chromium`, installed by
// scripts/setup) loads the page for a fixed report and for a real `tune --html` run, logs no
// console message (the pages have no script, so any message — an error, a CSP violation for
// something fetched — is a failure), and its screenshot is not blank. The detectors are checked
// against pages made to fail. Without Chromium the tests FAIL saying what to install.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "integration/cli_runner.hpp"
#include "tunekit/reporter.hpp"
#include "unit/report/html_fixture.hpp"

namespace tunekit::testing {
namespace {

namespace fs = std::filesystem;

// $TUNEKIT_CHROMIUM, else chromium or chromium-browser on PATH; empty when none.
std::string find_chromium() {
  if (const char* given = std::getenv("TUNEKIT_CHROMIUM"); given && *given) return given;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    for (const char* name : {"chromium", "chromium-browser"})
      if (!dir.empty() && ::access((fs::path(dir) / name).c_str(), X_OK) == 0)
        return (fs::path(dir) / name).string();
  return {};
}

struct BrowserRun {
  int status = -1;
  std::string log;  // chromium's stderr
  fs::path screenshot;
  std::vector<std::string> console;  // the page's console messages
};

// Loads `page` headless, screenshots it, and collects the console lines of its log.
BrowserRun load(const std::string& chromium, const fs::path& page, const fs::path& scratch) {
  BrowserRun run;
  run.screenshot = scratch / (page.stem().string() + ".png");
  const fs::path log = scratch / (page.stem().string() + ".log");
  const std::string command = "timeout 60 '" + chromium +
                              "' --headless --no-sandbox --disable-gpu --no-first-run "
                              "--user-data-dir='" +
                              (scratch / "profile").string() +
                              "' --enable-logging=stderr --v=0 "
                              "--window-size=1100,1400 --screenshot='" +
                              run.screenshot.string() + "' 'file://" + page.string() +
                              "' >/dev/null 2>'" + log.string() + "'";
  const int status = std::system(command.c_str());
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  run.log = read_text(log);
  std::istringstream lines(run.log);
  std::string line;
  while (std::getline(lines, line))
    if (contains(line, ":CONSOLE") || contains(line, "Uncaught")) run.console.push_back(line);
  return run;
}

struct Image {
  std::uint32_t width = 0, height = 0;
  int channels = 0;
  std::vector<std::uint8_t> pixels;  // rows of width * channels bytes, unfiltered
};

std::uint32_t be32(const std::string& s, std::size_t at) {
  return (std::uint32_t(std::uint8_t(s[at])) << 24) |
         (std::uint32_t(std::uint8_t(s[at + 1])) << 16) |
         (std::uint32_t(std::uint8_t(s[at + 2])) << 8) | std::uint32_t(std::uint8_t(s[at + 3]));
}

int paeth(int a, int b, int c) {
  const int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// An 8-bit, non-interlaced PNG (what Chromium writes) decoded with zlib; empty on anything else.
Image decode_png(const std::string& file) {
  Image img;
  if (file.size() < 8 || file.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return {};
  std::string idat;
  int color = -1;
  for (std::size_t at = 8; at + 12 <= file.size();) {
    const std::uint32_t length = be32(file, at);
    const std::string type = file.substr(at + 4, 4);
    if (type == "IHDR") {
      img.width = be32(file, at + 8);
      img.height = be32(file, at + 12);
      if (file[at + 16] != 8 || file[at + 20] != 0) return {};  // bit depth, interlace
      color = std::uint8_t(file[at + 17]);
    } else if (type == "IDAT") {
      idat += file.substr(at + 8, length);
    }
    at += 12 + length;
  }
  img.channels = color == 6 ? 4 : color == 2 ? 3 : color == 4 ? 2 : color == 0 ? 1 : 0;
  if (img.channels == 0 || img.width == 0) return {};
  const std::size_t stride = std::size_t(img.width) * std::size_t(img.channels);
  std::vector<std::uint8_t> raw((stride + 1) * img.height);
  uLongf size = static_cast<uLongf>(raw.size());
  if (uncompress(raw.data(), &size, reinterpret_cast<const Bytef*>(idat.data()),
                 static_cast<uLong>(idat.size())) != Z_OK ||
      size != raw.size())
    return {};
  img.pixels.assign(stride * img.height, 0);
  for (std::size_t y = 0; y < img.height; ++y) {
    const std::uint8_t filter = raw[y * (stride + 1)];
    for (std::size_t x = 0; x < stride; ++x) {
      const int in = raw[y * (stride + 1) + 1 + x];
      const int a = x >= std::size_t(img.channels) ? img.pixels[y * stride + x - img.channels] : 0;
      const int b = y > 0 ? img.pixels[(y - 1) * stride + x] : 0;
      const int c = x >= std::size_t(img.channels) && y > 0
                        ? img.pixels[(y - 1) * stride + x - img.channels]
                        : 0;
      const int pred = filter == 1   ? a
                       : filter == 2 ? b
                       : filter == 3 ? (a + b) / 2
                       : filter == 4 ? paeth(a, b, c)
                                     : 0;
      img.pixels[y * stride + x] = static_cast<std::uint8_t>(in + pred);
    }
  }
  return img;
}

// What fraction of pixels differ from the top-left one, and how many distinct colours there are.
struct Ink {
  double fraction = 0;
  std::size_t colours = 0;
};
Ink ink_of(const Image& img) {
  Ink ink;
  if (img.pixels.empty()) return ink;
  const std::size_t n = std::size_t(img.width) * img.height, ch = std::size_t(img.channels);
  std::set<std::uint32_t> colours;
  std::size_t differing = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t rgb = 0;
    bool differs = false;
    for (std::size_t k = 0; k < std::min<std::size_t>(ch, 3); ++k) {
      rgb = (rgb << 8) | img.pixels[i * ch + k];
      differs = differs || img.pixels[i * ch + k] != img.pixels[k];
    }
    differing += differs ? 1 : 0;
    if (colours.size() < 1000) colours.insert(rgb);
  }
  ink.fraction = double(differing) / double(n);
  ink.colours = colours.size();
  return ink;
}

class HtmlBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    chromium_ = find_chromium();
    ASSERT_FALSE(chromium_.empty())
        << "chromium not found: the HTML report's browser test needs it. Install it with "
           "scripts/setup (Debian package chromium), or set TUNEKIT_CHROMIUM to the binary.";
  }
  fs::path write_page(const std::string& name, const std::string& html) {
    const fs::path path = dir_ / name;
    write_text(path, html);
    return path;
  }
  void expect_clean_and_drawn(const BrowserRun& run) {
    EXPECT_EQ(run.status, 0) << run.log;
    for (const std::string& line : run.console) ADD_FAILURE() << "console message: " << line;
    const Image img = decode_png(read_text(run.screenshot));
    ASSERT_FALSE(img.pixels.empty()) << "no readable screenshot at " << run.screenshot;
    const Ink ink = ink_of(img);
    EXPECT_GT(ink.fraction, 0.02) << "the screenshot is (nearly) blank";
    EXPECT_GE(ink.colours, 4u) << "text, axes, the winner's and the default's colours";
  }
  std::string chromium_;
  TempDir dir_;
};

TEST_F(HtmlBrowser, TheFixedReportLoadsWithoutConsoleMessagesAndIsDrawn) {
  std::ostringstream page;
  make_reporter("html")->write(html_fixed_report(), page);
  expect_clean_and_drawn(load(chromium_, write_page("fixed.html", page.str()), dir_.path()));
}

TEST_F(HtmlBrowser, ARealRunsPageAndTheStorePageLoadClean) {
  const fs::path run_page = dir_ / "run.html", store_page = dir_ / "store.html";
  const CliResult tune =
      run_cli("tune sum --shape n=4096 --budget-evals 2 --quiet --html '" + run_page.string() + "'",
              dir_ / "cache", dir_.path());
  ASSERT_EQ(tune.status, 0) << tune.err;
  const CliResult report =
      run_cli("report --out '" + store_page.string() + "'", dir_ / "cache", dir_.path());
  ASSERT_EQ(report.status, 0) << report.err;
  expect_clean_and_drawn(load(chromium_, run_page, dir_.path()));
  expect_clean_and_drawn(load(chromium_, store_page, dir_.path()));
}

// The detectors themselves: a page that throws, and one that fetches, are caught; an empty page
// reads as blank. Without this the tests above could not fail.
TEST_F(HtmlBrowser, TheDetectorsCatchAScriptErrorAFetchAndABlankPage) {
  const BrowserRun bad =
      load(chromium_, write_page("bad.html", "<!DOCTYPE html><p>x</p><script>no_such();</script>"),
           dir_.path());
  EXPECT_FALSE(bad.console.empty()) << "a throwing script went unnoticed:\n" << bad.log;
  const BrowserRun fetch =
      load(chromium_,
           write_page(
               "fetch.html",
               "<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
               "'none'\"><img src=\"file:///nonexistent.png\">"),
           dir_.path());
  EXPECT_FALSE(fetch.console.empty()) << "a blocked fetch went unnoticed:\n" << fetch.log;
  const BrowserRun blank =
      load(chromium_, write_page("blank.html", "<!DOCTYPE html><title>b</title>"), dir_.path());
  const Ink ink = ink_of(decode_png(read_text(blank.screenshot)));
  EXPECT_LT(ink.fraction, 0.001) << "an empty page must read as blank";
}

}  // namespace
}  // namespace tunekit::testing
