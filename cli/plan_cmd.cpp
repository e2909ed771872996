// cli/plan_cmd.cpp: `wbcheck plan FILE [--json] [--svg OUT]`: what the early placement saves
// in ExecuTorch's memory plan, against the end placement.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/memplan.h"
#include "core/placement.h"

namespace wb::cli {

namespace {

struct PlanCmdOptions {
  std::string file;
  InputOptions input;
  std::string svg;
  bool json = false;
};

nlohmann::json planJson(const MemoryPlan& plan) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const PlannedTensor& t : plan.tensors) {
    tensors.push_back({{"node", t.node},
                       {"type", t.type},
                       {"bytes", t.allocatedBytes},
                       {"start", t.start},
                       {"end", t.end},
                       {"mutable_buffer", t.mutableBuffer},
                       {"write_back_value", t.writeBackValue},
                       {"offset", t.memOffset}});
  }
  nlohmann::json unplanned = nlohmann::json::array();
  for (const UnplannedNode& u : plan.unplanned) unplanned.push_back({{"node", u.node}, {"reason", u.reason}});
  return {{"peak_live_bytes", plan.peakLiveBytes}, {"peak_index", plan.peakIndex},
          {"arena_bytes", plan.arenaBytes},        {"tensors", tensors},
          {"unplanned", unplanned},                {"overlaps", plan.overlaps.size()}};
}

int runPlan(const PlanCmdOptions& options, const std::vector<std::string>& argv) {
  std::optional<LoadedProgram> loaded = loadProgram(options.file, options.input);
  if (!loaded) return kInputError;
  PlacedProgram atEnd = place(loaded->program, Placement::End, loaded->schemas);
  PlacedProgram early = place(loaded->program, Placement::Early, loaded->schemas);
  MemoryPlan endPlan = planMemory(atEnd.program, loaded->schemas);
  MemoryPlan earlyPlan = planMemory(early.program, loaded->schemas);
  PlanComparison saving = comparePlans(endPlan, earlyPlan);

  if (!options.svg.empty() && !writeFileAtomically(options.svg, renderLifetimeChartSvg(endPlan, earlyPlan))) {
    std::cerr << "wbcheck plan: cannot write " << options.svg << "\n";
    return kInputError;
  }
  if (options.json) {
    nlohmann::json out = provenance(argv);
    out["end"] = planJson(endPlan);
    out["early"] = planJson(earlyPlan);
    out["saving"] = {{"peak_bytes", saving.peakSavedBytes},
                     {"peak_percent", saving.peakSavedPercent},
                     {"arena_bytes", saving.arenaSavedBytes},
                     {"arena_percent", saving.arenaSavedPercent}};
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << fmt::format("{:<10} {:>16} {:>16}\n", "placement", "peak live bytes", "greedy arena");
    std::cout << fmt::format("{:<10} {:>16} {:>16}\n", "end", endPlan.peakLiveBytes, endPlan.arenaBytes);
    std::cout << fmt::format("{:<10} {:>16} {:>16}\n", "early", earlyPlan.peakLiveBytes, earlyPlan.arenaBytes);
    std::cout << fmt::format("{:<10} {:>16} {:>16}\n", "saved",
                             fmt::format("{} ({:.1f}%)", saving.peakSavedBytes, saving.peakSavedPercent),
                             fmt::format("{} ({:.1f}%)", saving.arenaSavedBytes, saving.arenaSavedPercent));
    if (!earlyPlan.unplanned.empty())
      std::cout << earlyPlan.unplanned.size() << " node(s) not planned (no static type), e.g. %"
                << earlyPlan.unplanned.front().node << ": " << earlyPlan.unplanned.front().reason << "\n";
    for (const StorageOverlap& o : earlyPlan.overlaps) std::cout << "overlap (early): " << o.text << "\n";
    if (!options.svg.empty()) std::cout << "lifetime chart written to " << options.svg << "\n";
  }
  // Peak live bytes are monotone in lifetimes, so early never needs more than end, except for
  // the clones early inserts to break a cycle of copies (where end is wrong anyway): those are
  // new allocations end does not have.
  const std::int64_t allowance = insertedCloneBytes(loaded->program, early.program);
  if (earlyPlan.peakLiveBytes > endPlan.peakLiveBytes + allowance) {
    std::cerr << "wbcheck plan: early needs more peak memory than end (" << earlyPlan.peakLiveBytes << " > "
              << endPlan.peakLiveBytes << " + " << allowance << " bytes of clones): a bug\n";
    return kViolated;
  }
  return kHolds;
}

}  // namespace

void registerPlan(CLI::App& app, Action& action, const std::vector<std::string>& argv) {
  auto options = std::make_shared<PlanCmdOptions>();
  CLI::App* sub = app.add_subcommand("plan", "Memory plan of the end and early placements: peak live bytes and greedy arena");
  sub->add_option("FILE", options->file, "program file, or - for standard input")->required();
  addInputOptions(*sub, options->input);
  sub->add_option("--svg", options->svg, "write a lifetime chart of both placements to this SVG file");
  sub->add_flag("--json", options->json, "machine-readable output");
  sub->callback([&action, options, argv] { action = [options, argv] { return runPlan(*options, argv); }; });
}

}  // namespace wb::cli
