// cli/main.cpp: the wbcheck command line (DESIGN §12). Thin: parse arguments, call libraries.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"

int main(int argc, char** argv) {
  using namespace wb::cli;
  const std::vector<std::string> args(argv, argv + argc);
  CLI::App app{"wbcheck: verify and fuzz ExecuTorch's write-back of mutated buffers.\n"
               "Exit codes: 0 holds, 1 property violated, 2 usage or input error, 3 unknown."};
  app.set_version_flag("--version", std::string("wbcheck ") + WBCHECK_VERSION);
  app.require_subcommand(1);
  Action action;
  registerPlace(app, action, args);
  registerPlan(app, action, args);
  registerCheck(app, action, args);
  registerProve(app, action, args);
  registerGen(app, action, args);
  registerFuzz(app, action, args);
  registerShrink(app, action, args);
  registerValidate(app, action, args);
  registerPlacements(app, action, args);
  registerDraw(app, action, args);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kInputError;
  }
  try {
    return action ? action() : kInputError;
  } catch (const std::exception& e) {
    std::cerr << "wbcheck: internal error: " << e.what() << "\n";
    return kInputError;
  }
}
