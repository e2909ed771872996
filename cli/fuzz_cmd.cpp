// cli/fuzz_cmd.cpp: `wbcheck fuzz [--time S | --cases N] [--seed S] [--placement P | --pass-cmd CMD
// [--pass-timeout-ms T] [--persistent]] [--mode M] [--nodes N] [--behaviours N] [--out DIR] [--jobs J]
// [--until-found] [--until-classes LIST] [--no-draw]`: generates programs, checks them with one
// placement (or an external pass), shrinks and writes every new finding (NAME.txt, and its picture
// NAME.svg), prints a summary.
//
// The logic (options, cases, classification, shrinking, deduplication, artifacts, summary) is
// campaign/ (campaign/fuzz_run.h, campaign/worker.h); the worker processes and Ctrl-C are
// cli/fuzz_pool.h; this file reads the options, creates the output directory, writes the
// artifacts and prints progress and the summary.
#include <chrono>
#include <filesystem>
#include <iostream>

#include "campaign/fuzz_run.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/fuzz_pool.h"
#include "cli/picture.h"
#include "draw/render.h"

namespace wb::cli {

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int runFuzz(campaign::FuzzOptions options, const PassCmdOptions& passCmd, const std::vector<std::string>& argv) {
  const char* me = "wbcheck fuzz";
  options.passCmd = passCmd.command;
  options.passTimeout = std::chrono::milliseconds(passCmd.timeoutMs);
  options.passPersistent = passCmd.persistent;
  options.passForm = static_cast<ProgramForm>(passCmd.form);
  campaign::FuzzPlanOrError planned = campaign::planFuzzRun(options, shellWords(argv));
  if (!planned.plan) {
    std::cerr << me << ": " << planned.error << "\n";
    return kInputError;
  }
  campaign::FuzzPlan& plan = *planned.plan;
  if (plan.worker.draw && !draw::findOnPath("dot")) {
    std::cerr << me << ": " << draw::kDotMissing << " (or pass --no-draw: findings without pictures)\n";
    return kInputError;
  }
  std::error_code ec;
  std::filesystem::create_directories(options.out, ec);
  if (ec) {
    std::cerr << me << ": cannot create " << options.out << ": " << ec.message() << "\n";
    return kInputError;
  }
  plan.worker.start = Clock::now();

  const bool showProgress = stderrIsTerminal();
  campaign::FuzzTotals totals;
  auto done = [&] { return campaign::fuzzRunDone(plan, totals.table); };
  auto onFinding = [&](campaign::FindingRecord r) {
    const std::optional<campaign::ArtifactFile> file = campaign::addRecord(totals, std::move(r));
    if (!file) return;
    const std::string path = (std::filesystem::path(options.out) / file->fileName).string();
    if (!writeFileAtomically(path, file->text)) {
      totals.writeFailed = true;
      return;
    }
    totals.written.push_back(path);
    if (!plan.worker.draw) return;
    const std::string picture = campaign::pictureFileName(path);
    if (const std::optional<std::string> error = writeFindingPicture(file->text, picture, plan.worker.campaign.inputs))
      std::cerr << me << ": cannot draw " << picture << ": " << *error << "\n";
    else
      totals.written.push_back(picture);
  };
  Clock::time_point lastLine = Clock::now();
  auto onCounts = [&](const campaign::WorkerCounts& c) {
    totals.cases = c.cases;
    totals.diverging = c.diverging;
    totals.shrinks = c.shrinks;
    totals.shrinkSeconds = static_cast<double>(c.shrinkMicroseconds) / 1e6;
    if (!showProgress || std::chrono::duration<double>(Clock::now() - lastLine).count() < 0.5) return;
    std::cerr << campaign::progressLine(totals, secondsSince(plan.worker.start)) << std::flush;
    lastLine = Clock::now();
  };

  {
    const InterruptGuard interrupts;
    if (options.jobs == 1) {
      campaign::runWorker(plan.worker, onFinding, onCounts, [&] { return stopRequested() || done(); });
    } else {
      runWorkerProcesses(plan.worker, onFinding, onCounts, done);
    }
  }

  const double elapsed = secondsSince(plan.worker.start);
  if (showProgress) std::cerr << campaign::progressLine(totals, elapsed) << "\n";
  std::cout << provenanceComment(argv) << campaign::fuzzSummary(options, totals, elapsed, stopRequested());
  if (totals.writeFailed) std::cerr << me << ": some findings could not be written to " << options.out << "\n";
  return totals.table.empty() ? kHolds : kViolated;
}

}  // namespace

void registerFuzz(CLI::App& app, Action& action, const std::vector<std::string>& argv) {
  auto options = std::make_shared<campaign::FuzzOptions>();
  auto passCmd = std::make_shared<PassCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "fuzz",
      "Generate and check programs with one placement; shrink and write every new finding.\n"
      "Exit codes: 0 nothing found, 1 something found, 2 usage or input error.");
  auto* time = sub->add_option("--time", options->seconds, "stop after S seconds (default 60 if --cases is not given)");
  sub->add_option("--cases", options->cases, "stop after N cases (over all jobs)")->excludes(time);
  sub->add_option("--seed", options->seed, "run seed: case seeds are derived from it and the job index")->capture_default_str();
  CLI::Option* placement =
      sub->add_option("--placement", options->placement, placementNames(" | ") + " (pr20744: the latest version)")
          ->capture_default_str();
  addPassCmdOptions(*sub, *passCmd, placement, true);
  sub->add_option("--mode", options->mode, "realistic | adversarial (default: drawn per case)");
  sub->add_option("--nodes", options->nodes, "maximum body nodes per generated program")->capture_default_str();
  addBehavioursOption(*sub, options->behaviours);
  sub->add_option("--out", options->out, "directory for the shrunk findings (one form-1 file each)")->capture_default_str();
  sub->add_option("--jobs", options->jobs, "worker processes, each with its own seed stream")->capture_default_str();
  sub->add_flag("--until-found", options->untilFound, "stop at the first finding");
  sub->add_option("--until-classes", options->untilClasses,
                  "stop once every listed hazard class was found: comma-separated ids (h5_view_copy, ...) or "
                  "'all' (every class executorch-semantics attributes to the placement)");
  sub->add_flag("--no-draw", options->noDraw, "write no picture (NAME.svg, drawn by graphviz) beside each finding");
  sub->callback([&action, options, passCmd, argv] {
    action = [options, passCmd, argv] { return runFuzz(*options, *passCmd, argv); };
  });
}

}  // namespace wb::cli
