// draw/render.cpp: running graphviz's `dot` (see draw/render.h).
#include "draw/render.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern char** environ;

namespace wb::draw {

namespace fs = std::filesystem;

std::optional<std::string> findOnPath(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string_view dirs(path);
  while (true) {
    const std::size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + std::string(program);
    if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    dirs.remove_prefix(colon + 1);
  }
}

namespace {

std::string readAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A fresh file name beside `outPath`.
fs::path sibling(const std::string& outPath, std::string_view suffix) {
  fs::path p(outPath);
  p += "." + std::to_string(::getpid()) + std::string(suffix);
  return p;
}

}  // namespace

std::optional<std::string> renderWithDot(std::string_view dot, std::string_view format, const std::string& outPath) {
  const std::optional<std::string> program = findOnPath("dot");
  if (!program) return std::string(kDotMissing);
  const fs::path input = sibling(outPath, ".tmp.dot");
  const fs::path output = sibling(outPath, ".tmp");
  const fs::path errors = sibling(outPath, ".tmp.err");
  {
    std::ofstream out(input, std::ios::binary);
    out << dot;
    if (!out.flush()) return "cannot write " + input.string();
  }
  const std::string formatArg = "-T" + std::string(format);
  const std::string outArg = "-o" + output.string();
  std::vector<std::string> args{*program, formatArg, outArg, input.string()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, program->c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  std::error_code ignored;
  if (spawned != 0) {
    fs::remove(input, ignored);
    fs::remove(errors, ignored);
    return "cannot run " + *program + ": " + std::strerror(spawned);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string message = readAll(errors);
  fs::remove(input, ignored);
  fs::remove(errors, ignored);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fs::remove(output, ignored);
    return "dot failed" + (message.empty() ? std::string() : ": " + message);
  }
  std::error_code ec;
  fs::rename(output, outPath, ec);
  if (ec) {
    fs::remove(output, ignored);
    return "cannot write " + outPath + ": " + ec.message();
  }
  return std::nullopt;
}

}  // namespace wb::draw
