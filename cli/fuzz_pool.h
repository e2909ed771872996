// cli/fuzz_pool.h: the processes and signals of `wbcheck fuzz`: Ctrl-C, and one worker
// process per job, each reporting to this one over a pipe (campaign/worker.h's messages).
#pragma once

#include <signal.h>

#include <functional>

#include "campaign/worker.h"

namespace wb::cli {

// Installs a SIGINT handler for its lifetime: Ctrl-C asks the run to stop after the current
// case, so the summary is still printed and nothing is half-written. Restores the previous
// handler when destroyed.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  struct sigaction previous_ {};
};

// Whether Ctrl-C was pressed since the process started.
bool stopRequested();

// Runs `config.jobs` worker processes, job k with config.job = k, and hands their findings and
// their summed counts to the callbacks as they arrive. When Ctrl-C was pressed or `done()`
// becomes true, asks every worker to stop; returns once all have exited.
void runWorkerProcesses(const campaign::WorkerConfig& config,
                        const std::function<void(campaign::FindingRecord)>& onFinding,
                        const std::function<void(const campaign::WorkerCounts&)>& onCounts,
                        const std::function<bool()>& done);

}  // namespace wb::cli
