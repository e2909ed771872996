// cli/main.cpp: the wbcheck command line (DESIGN §12). Thin: parse arguments, call libraries.
#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"wbcheck: verify and fuzz the ExecuTorch buffer write-back pass"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
