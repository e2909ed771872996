// cli/gen_cmd.cpp: `wbcheck gen [--seed S] [--nodes N] [--mode M] [--model NAME ...] [--stats N]`:
// prints a generated program (form 1), a zoo model, or coverage statistics of the generator.
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/text.h"
#include "gen/generator.h"

namespace wb::cli {

namespace {

struct GenCmdOptions {
  std::uint64_t seed = 0;
  int nodes = 24;
  std::string mode;  // empty: drawn from the seed
  int stats = 0;
};

int runGen(const GenCmdOptions& options, const std::vector<std::string>& argv) {
  gen::GenOptions genOptions;
  genOptions.maxNodes = options.nodes;
  if (!options.mode.empty()) {
    genOptions.mode = gen::genModeFromString(options.mode);
    if (!genOptions.mode) {
      std::cerr << "wbcheck gen: unknown mode '" << options.mode << "' (realistic | adversarial)\n";
      return kInputError;
    }
  }
  if (options.nodes < 1 || options.nodes > 100000) {
    std::cerr << "wbcheck gen: --nodes must be between 1 and 100000\n";
    return kInputError;
  }
  if (options.stats > 0) {
    std::cout << gen::formatStats(gen::collectStats(options.seed, options.stats, genOptions));
    return kHolds;
  }
  gen::Generator generator(genOptions);
  gen::RandomChoices choices(options.seed);
  gen::Generated generated = generator.generate(choices);
  std::cout << provenanceComment(argv);
  std::cout << "# mode: " << gen::toString(generated.mode) << "\n";
  std::cout << writeProgram(generated.program);
  return kHolds;
}

}  // namespace

void registerGen(CLI::App& app, Action& action, const std::vector<std::string>& argv) {
  auto options = std::make_shared<GenCmdOptions>();
  CLI::App* sub = app.add_subcommand("gen", "Generate a random program (form 1), or statistics over many");
  sub->add_option("--seed", options->seed, "seed: the same seed gives the same program everywhere")->capture_default_str();
  sub->add_option("--nodes", options->nodes, "maximum number of body nodes")->capture_default_str();
  sub->add_option("--mode", options->mode, "realistic | adversarial (default: drawn from the seed)");
  sub->add_option("--stats", options->stats, "instead of a program: how often each hazard family and op occurs in N programs");
  sub->callback([&action, options, argv] { action = [options, argv] { return runGen(*options, argv); }; });
}

}  // namespace wb::cli
