// cli/commands.h: one registration function per subcommand. Each adds its subcommand and
// options to the app and, when the subcommand is chosen, stores in `action` the function that
// runs it and returns the exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace wb::cli {

using Action = std::function<int()>;

void registerPlace(CLI::App& app, Action& action, const std::vector<std::string>& argv);
void registerPlan(CLI::App& app, Action& action, const std::vector<std::string>& argv);
void registerCheck(CLI::App& app, Action& action, const std::vector<std::string>& argv);
void registerGen(CLI::App& app, Action& action, const std::vector<std::string>& argv);
void registerFuzz(CLI::App& app, Action& action, const std::vector<std::string>& argv);
void registerShrink(CLI::App& app, Action& action, const std::vector<std::string>& argv);
void registerProve(CLI::App& app, Action& action, const std::vector<std::string>& argv);
void registerValidate(CLI::App& app, Action& action, const std::vector<std::string>& argv);
void registerPlacements(CLI::App& app, Action& action, const std::vector<std::string>& argv);
void registerDraw(CLI::App& app, Action& action, const std::vector<std::string>& argv);

}  // namespace wb::cli
