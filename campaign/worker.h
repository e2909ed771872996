// campaign/worker.h: one worker of `wbcheck fuzz` (DESIGN §10, §12): runs the cases of its seed
// stream, shrinks the findings the shrink policy selects, and hands each as a FindingRecord to
// its caller; and the messages by which a worker process reports to the parent.
//
// A worker is single-threaded and deterministic in its configuration, up to when it stops
// (time, a stop request). The CLI runs one in-process or one per process (cli/fuzz_pool.h),
// writes files and prints; nothing here touches files, signals or processes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "campaign/campaign.h"
#include "campaign/shrink_policy.h"

namespace wb::campaign {

struct WorkerConfig {
  CampaignOptions campaign;
  std::uint64_t runSeed = 0;
  int job = 0;
  int jobs = 1;
  std::uint64_t cases = 0;  // total over all jobs; 0: unlimited
  double seconds = 0;       // 0: unlimited
  std::chrono::steady_clock::time_point start;  // of the run: time limit, time to find
  std::string outDir;       // where the artifacts go: their replay lines name the file there
  std::string foundBy;      // the command line, for the artifacts' `# found by:`
  bool draw = true;         // the artifacts' headers name a picture beside them (the CLI draws it)
  ShrinkPolicy shrink;
};

struct WorkerCounts {
  std::uint64_t cases = 0;
  std::uint64_t diverging = 0;  // cases on which the placement diverged or failed
  std::uint64_t shrinks = 0;     // findings shrunk
  std::uint64_t shrinkMicroseconds = 0;  // the wall time those shrinks took (the rest is the cases')
  friend bool operator==(const WorkerCounts&, const WorkerCounts&) = default;
};

// The share of a run's `total` cases that job `job` of `jobs` runs (0: unlimited); the shares
// add up to the total.
std::uint64_t casesOfJob(std::uint64_t total, int job, int jobs);

// Runs case after case of the job's seed stream until its share of the cases is done, the time
// is up, or `stop()` says so (checked before each case; through a persistent pass command the
// cases go in batches (runCases), and the time is checked before each batch). Each selected
// finding is shrunk and reported once with its artifact; a repeat of a shape this worker
// already reported comes with an empty artifact (it only adds to the count). `progress` gets
// the counts now and then, and once at the end.
void runWorker(const WorkerConfig& config, const std::function<void(const FindingRecord&)>& report,
               const std::function<void(const WorkerCounts&)>& progress, const std::function<bool()>& stop);

// ---------------------------------------------------------------------------------------------
// Worker processes talk to the parent over a pipe: "P <cases> <diverging> <shrinks>
// <shrink microseconds>\n" progress lines and
// "F <bytes>\n<encoded record>" findings (encodeRecord).

std::string progressMessage(const WorkerCounts& counts);
std::string findingMessage(const FindingRecord& record);

// What the parent knows of one worker: the bytes not parsed yet, and the last counts.
struct WorkerStream {
  std::string buffer;
  WorkerCounts counts;
};

// Parses every complete message in `stream.buffer` (a message may arrive in pieces: an
// incomplete one stays for the next call), updates the counts and hands each finding to
// `onFinding`. Unknown lines and malformed records are skipped.
void readMessages(WorkerStream& stream, const std::function<void(FindingRecord)>& onFinding);

}  // namespace wb::campaign
