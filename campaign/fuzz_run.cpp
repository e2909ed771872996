// campaign/fuzz_run.cpp: a fuzzing run's plan, totals, progress line and summary (see
// campaign/fuzz_run.h).
#include "campaign/fuzz_run.h"

#include <cstdio>
#include <sstream>

namespace wb::campaign {

passcmd::ExternalPass FuzzOptions::externalPass() const {
  passcmd::ExternalPass pass;
  pass.command = passCmd;
  pass.limits.timeout = passTimeout;
  pass.persistent = passPersistent;
  pass.form = passForm;
  return pass;
}

FuzzPlanOrError planFuzzRun(const FuzzOptions& options, std::string foundBy) {
  FuzzPlanOrError out;
  const std::optional<Placement> placement = placementFromString(options.placement);
  if (!placement) {
    out.error = "unknown placement '" + options.placement + "'";
    return out;
  }
  FuzzPlan plan;
  WorkerConfig& worker = plan.worker;
  worker.campaign.placement = *placement;
  if (!options.passCmd.empty()) worker.campaign.passCmd = passcmd::PassRunner(options.externalPass());
  worker.campaign.maxNodes = options.nodes;
  worker.campaign.behaviours = options.behaviours;
  if (!options.mode.empty()) {
    worker.campaign.mode = gen::genModeFromString(options.mode);
    if (!worker.campaign.mode) {
      out.error = "unknown mode '" + options.mode + "' (realistic | adversarial)";
      return out;
    }
  }
  if (options.nodes < 1 || options.nodes > 1000 || options.jobs < 1 || options.jobs > 256 || options.seconds < 0 ||
      options.behaviours < 1 || options.behaviours > 64) {
    out.error = "--nodes must be in 1..1000, --jobs in 1..256, --behaviours in 1..64, --time >= 0";
    return out;
  }
  if (options.untilClasses == "all" && !options.passCmd.empty()) {
    out.error = "--until-classes all names the classes of one of wbcheck's placements: with --pass-cmd, list them";
    return out;
  }
  if (options.untilClasses == "all") {
    plan.wanted = expectedHazards(*placement);
  } else if (!options.untilClasses.empty()) {
    std::istringstream list(options.untilClasses);
    for (std::string id; std::getline(list, id, ',');) {
      const std::optional<HazardClass> h = hazardFromId(id);
      if (!h) {
        out.error = "unknown hazard class '" + id + "'; known:";
        for (HazardClass k : allHazardClasses()) out.error += " " + std::string(hazardId(k));
        return out;
      }
      plan.wanted.push_back(*h);
    }
  }
  plan.untilFound = options.untilFound;
  worker.runSeed = options.seed;
  worker.jobs = options.jobs;
  worker.cases = options.cases;
  worker.seconds = options.cases == 0 && options.seconds == 0 ? 60.0 : options.seconds;
  worker.outDir = options.out;
  worker.foundBy = std::move(foundBy);
  worker.draw = !options.noDraw;
  out.plan = std::move(plan);
  return out;
}

std::optional<ArtifactFile> addRecord(FuzzTotals& totals, FindingRecord record) {
  ArtifactFile file{artifactFileName(record.key, record.shape), record.artifact};
  if (!totals.table.add(std::move(record)) || file.text.empty()) return std::nullopt;
  return file;
}

bool fuzzRunDone(const FuzzPlan& plan, const FindingTable& table) {
  if (plan.untilFound && !table.empty()) return true;
  return !plan.wanted.empty() && table.hasAll(plan.wanted);
}

std::string progressLine(const FuzzTotals& totals, double elapsed) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << "\r[fuzz] " << totals.cases << " cases, " << (elapsed > 0 ? totals.cases / elapsed : 0.0) << " cases/s, "
    << totals.diverging << " diverging, " << totals.table.records().size() << " findings";
  const auto counts = totals.table.countsByHazard();
  if (!counts.empty()) {
    s << " (";
    bool first = true;
    for (const auto& [label, n] : counts) {
      s << (first ? "" : ", ") << label.substr(0, label.find(' ')) << ": " << n;
      first = false;
    }
    s << ")";
  }
  s << ", " << elapsed << " s   ";
  return s.str();
}

std::string fuzzSummary(const FuzzOptions& options, const FuzzTotals& totals, double elapsed, bool interrupted) {
  // The name the run's findings carry (`pr20744` reads as the latest version and prints it).
  const std::optional<Placement> placement = placementFromString(options.placement);
  std::string name = placement ? "placement " + std::string(toString(*placement)) : "placement " + options.placement;
  if (!options.passCmd.empty()) name = passcmd::commandLineWords(options.externalPass());
  char line[512];
  std::snprintf(line, sizeof line, ", seed %llu, %llu cases in %.1f s (%.1f cases/s), %llu diverging%s\n",
                static_cast<unsigned long long>(options.seed),
                static_cast<unsigned long long>(totals.cases), elapsed, elapsed > 0 ? totals.cases / elapsed : 0.0,
                static_cast<unsigned long long>(totals.diverging), interrupted ? " (interrupted)" : "");
  std::string out = name + line;
  if (totals.shrinks > 0) {
    // A line of its own: the summary line above stays as scripts read it.
    char shrinking[160];
    std::snprintf(shrinking, sizeof shrinking, "shrinking: %llu finding(s) shrunk in %.1f s of the workers' time\n",
                  static_cast<unsigned long long>(totals.shrinks), totals.shrinkSeconds);
    out += shrinking;
  }
  // With --until-classes, the classes the run looked for (bench/time_to_find.sh reads them).
  std::vector<HazardClass> wanted;
  if (options.untilClasses == "all" && placement) {
    wanted = expectedHazards(*placement);
  } else {
    std::istringstream list(options.untilClasses);
    for (std::string id; std::getline(list, id, ',');)
      if (const std::optional<HazardClass> h = hazardFromId(id)) wanted.push_back(*h);
  }
  if (!wanted.empty()) {
    out += "wanted:";
    for (std::size_t i = 0; i < wanted.size(); ++i) out += (i ? "; " : " ") + std::string(hazardLabel(wanted[i]));
    out += "\n";
  }
  if (totals.table.empty()) {
    out += "no findings\n";
  } else {
    out += totals.table.formatSummary();
    for (const std::string& path : totals.written) out += "wrote " + path + "\n";
  }
  return out;
}

}  // namespace wb::campaign
