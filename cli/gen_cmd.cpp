// cli/gen_cmd.cpp: `wbcheck gen [--seed S] [--nodes N] [--mode M] [--model NAME ...] [--stats N]`:
// prints a generated program (form 1), a zoo model, or coverage statistics of the generator.
#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/text.h"
#include "gen/generator.h"
#include "gen/zoo.h"

namespace wb::cli {

namespace {

struct GenCmdOptions {
  std::uint64_t seed = 0;
  int nodes = 24;
  std::string mode;  // empty: drawn from the seed
  int stats = 0;
  std::string model;  // a zoo model instead of a random program
  gen::ZooOptions zoo;
  std::string cacheUpdate = "index_put";
};

// Bounds that keep a model's text and the oracle's memory reasonable.
bool zooOptionsInRange(const gen::ZooOptions& z) {
  auto in = [](int v, int lo, int hi) { return v >= lo && v <= hi; };
  return in(z.layers, 1, 4096) && in(z.heads, 1, 256) && in(z.headDim, 1, 1024) && in(z.seqLen, 1, 1 << 16) &&
         in(z.tokens, 1, 1024) && in(z.batch, 1, 1024) && in(z.channels, 1, 1 << 16) && in(z.counters, 1, 1 << 16) &&
         in(z.steps, 1, 4096) && in(z.hidden, 1, 1 << 16) && in(z.inputSize, 1, 1 << 16);
}

int runModel(const GenCmdOptions& options, const std::vector<std::string>& argv) {
  gen::ZooOptions zoo = options.zoo;
  std::optional<gen::CacheUpdate> update = gen::cacheUpdateFromString(options.cacheUpdate);
  if (!update) {
    std::cerr << "wbcheck gen: unknown --cache-update '" << options.cacheUpdate << "'\n";
    return kInputError;
  }
  zoo.cacheUpdate = *update;
  if (!zooOptionsInRange(zoo)) {
    std::cerr << "wbcheck gen: a model option is out of range\n";
    return kInputError;
  }
  std::optional<Program> model = gen::generateModel(options.model, zoo);
  if (!model) {
    std::string names;
    for (const std::string& n : gen::modelNames()) names += (names.empty() ? "" : " | ") + n;
    std::cerr << "wbcheck gen: unknown model '" << options.model << "' (" << names << ")\n";
    return kInputError;
  }
  std::cout << provenanceComment(argv) << writeProgram(*model);
  return kHolds;
}

int runGen(const GenCmdOptions& options, const std::vector<std::string>& argv) {
  if (!options.model.empty()) return runModel(options, argv);
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
  sub->add_option("--model", options->model, "a realistic model instead: decoder | batchnorm | counter | rnn");
  sub->add_option("--layers", options->zoo.layers, "model: layers")->capture_default_str();
  sub->add_option("--heads", options->zoo.heads, "decoder: attention heads")->capture_default_str();
  sub->add_option("--head-dim", options->zoo.headDim, "decoder: head dimension")->capture_default_str();
  sub->add_option("--seq-len", options->zoo.seqLen, "decoder: KV-cache length")->capture_default_str();
  sub->add_option("--tokens", options->zoo.tokens, "decoder: new tokens per call")->capture_default_str();
  sub->add_option("--cache-update", options->cacheUpdate,
                  "decoder: index_put | index_put_ | slice_scatter | index_copy_ | update_cache")
      ->capture_default_str();
  sub->add_option("--channels", options->zoo.channels, "batchnorm: channels")->capture_default_str();
  sub->add_option("--counters", options->zoo.counters, "counter: counters")->capture_default_str();
  sub->add_option("--hidden", options->zoo.hidden, "rnn: hidden size")->capture_default_str();
  sub->add_option("--steps", options->zoo.steps, "rnn: time steps")->capture_default_str();
  sub->callback([&action, options, argv] { action = [options, argv] { return runGen(*options, argv); }; });
}

}  // namespace wb::cli
