// campaign/fuzz_run.h: a `wbcheck fuzz` run (DESIGN §12) without its processes and files: the
// options as given and their validation into a plan, when the run is done, the totals of its
// workers' reports, the progress line and the summary it ends with.
//
// cli/fuzz_cmd.cpp reads the options, creates the output directory, runs the workers (one
// in-process, or a pool of processes: cli/fuzz_pool.h), writes the artifacts addRecord hands
// back and prints the summary.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "campaign/campaign.h"
#include "campaign/worker.h"
#include "passcmd/process.h"

namespace wb::campaign {

// The options of `wbcheck fuzz`, as given on the command line.
struct FuzzOptions {
  double seconds = 0;       // 0: not given
  std::uint64_t cases = 0;  // 0: not given
  std::uint64_t seed = 1;
  std::string placement = "early";
  std::string mode;         // empty: drawn per case
  int nodes = 10;
  int behaviours = oracle::kDefaultBehaviours;  // behaviour draws per check
  std::string out = "fuzz-findings";
  int jobs = 1;
  bool untilFound = false;
  std::string untilClasses;  // "all" or comma-separated hazard ids
  bool noDraw = false;       // no picture beside each finding
  // An external pass under test instead of `placement` (docs/pass-protocol.md): its command,
  // and the time limit of one run of it.
  std::string passCmd;
  std::chrono::milliseconds passTimeout = passcmd::ProcessLimits{}.timeout;
  bool passPersistent = false;
  ProgramForm passForm = ProgramForm::ExportedProgram;  // --pass-form
  // The external pass these options describe (passCmd must be set).
  passcmd::ExternalPass externalPass() const;
};

// What a run does.
struct FuzzPlan {
  WorkerConfig worker;              // job 0's; each process gets its own `job`; `start` unset
  std::vector<HazardClass> wanted;  // --until-classes: stop once each was found
  bool untilFound = false;
};

// The plan of `options`, or the message of the first option that is wrong (usage error).
// `foundBy` is the command line, for the artifacts. With neither --time nor --cases a run
// lasts 60 seconds.
struct FuzzPlanOrError {
  std::optional<FuzzPlan> plan;
  std::string error;
};
FuzzPlanOrError planFuzzRun(const FuzzOptions& options, std::string foundBy);

// What the workers have reported so far.
struct FuzzTotals {
  FindingTable table;
  std::vector<std::string> written;  // artifact paths, in the order they were written
  std::uint64_t cases = 0, diverging = 0;
  // Findings shrunk, and the time their shrinking took, summed over the workers: what of the
  // run's time went to shrinking rather than to cases.
  std::uint64_t shrinks = 0;
  double shrinkSeconds = 0;
  bool writeFailed = false;
};

// A new finding's artifact, for the caller to write into the output directory.
struct ArtifactFile {
  std::string fileName;
  std::string text;
};

// Adds a worker's record to the table; the artifact to write if the record is new (by the
// table's deduplication) and carries one.
std::optional<ArtifactFile> addRecord(FuzzTotals& totals, FindingRecord record);

// The run may stop: --until-found and something was found, or every --until-classes class.
bool fuzzRunDone(const FuzzPlan& plan, const FindingTable& table);

// "\r[fuzz] 120 cases, 40.0 cases/s, 35 diverging, 4 findings (H5: 3, B1: 1), 3.0 s   "
std::string progressLine(const FuzzTotals& totals, double elapsed);

// The summary on standard output after the provenance line: cases, rate and divergences, then
// the findings table (or "no findings") and the files written.
std::string fuzzSummary(const FuzzOptions& options, const FuzzTotals& totals, double elapsed, bool interrupted);

}  // namespace wb::campaign
