// tests/cli_runner.h: runs the wbcheck executable as a user would, for the end-to-end tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/testing.h"

namespace wb::testing {

struct CliRun {
  int exitCode = -1;  // -1: ended by a signal
  std::string out;    // stdout
  std::string err;    // stderr
};

// Runs `wbcheck ARGS` through the shell (ARGS is shell text: quote what needs it), with
// standard input from `input`. Scratch files are per process, so parallel ctest runs do not meet.
inline CliRun runWbcheck(const std::string& args, const std::string& input = "") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("wbcheck_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto in = dir / "in.txt", out = dir / "out.txt", err = dir / "err.txt";
  std::ofstream(in) << input;
  const std::string command = std::string(WBCHECK_BINARY) + " " + args + " < " + in.string() + " > " + out.string() +
                              " 2> " + err.string();
  const int status = std::system(command.c_str());
  CliRun run;
  run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = readFile(out);
  run.err = readFile(err);
  std::filesystem::remove_all(dir);
  return run;
}

}  // namespace wb::testing
