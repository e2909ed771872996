// cli/fuzz_pool.cpp: worker processes, pipes and Ctrl-C for `wbcheck fuzz` (see cli/fuzz_pool.h).
#include "cli/fuzz_pool.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

namespace wb::cli {

namespace {

// The one mutable static of the program, and why: a signal handler can do nothing but set a
// flag of this type. SIGINT (Ctrl-C) sets it; the case loop and the parent's poll loop read it
// and stop after the current case.
volatile std::sig_atomic_t gStopRequested = 0;

extern "C" void onInterrupt(int) { gStopRequested = 1; }

bool writeAll(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  campaign::WorkerStream stream;
  bool open = true;
};

}  // namespace

InterruptGuard::InterruptGuard() {
  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &previous_);
}

InterruptGuard::~InterruptGuard() { ::sigaction(SIGINT, &previous_, nullptr); }

bool stopRequested() { return gStopRequested != 0; }

void runWorkerProcesses(const campaign::WorkerConfig& config,
                        const std::function<void(campaign::FindingRecord)>& onFinding,
                        const std::function<void(const campaign::WorkerCounts&)>& onCounts,
                        const std::function<bool()>& done) {
  const char* me = "wbcheck fuzz";
  std::vector<Child> children;
  for (int job = 0; job < config.jobs; ++job) {
    int fds[2];
    if (::pipe(fds) != 0) {
      std::cerr << me << ": pipe failed\n";
      break;
    }
    std::cout.flush();
    std::cerr.flush();
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      std::cerr << me << ": fork failed\n";
      break;
    }
    if (pid == 0) {  // the worker: its own seed stream, results to the pipe, then exit
      ::close(fds[0]);
      for (const Child& c : children) ::close(c.fd);
      campaign::WorkerConfig mine = config;
      mine.job = job;
      bool pipeOk = true;
      campaign::runWorker(
          mine,
          [&](const campaign::FindingRecord& r) { pipeOk = pipeOk && writeAll(fds[1], campaign::findingMessage(r)); },
          [&](const campaign::WorkerCounts& c) { pipeOk = pipeOk && writeAll(fds[1], campaign::progressMessage(c)); },
          [&] { return stopRequested() || !pipeOk; });
      ::close(fds[1]);
      ::_exit(0);
    }
    ::close(fds[1]);
    children.push_back(Child{pid, fds[0], {}, true});
  }
  bool stopSent = false;
  for (;;) {
    std::vector<pollfd> polls;
    std::vector<Child*> polled;
    for (Child& c : children)
      if (c.open) {
        polls.push_back({c.fd, POLLIN, 0});
        polled.push_back(&c);
      }
    if (polls.empty()) break;
    const int ready = ::poll(polls.data(), polls.size(), 200);
    if (ready < 0 && errno != EINTR) break;
    for (std::size_t k = 0; ready > 0 && k < polls.size(); ++k) {
      if (!(polls[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char chunk[65536];
      const ssize_t n = ::read(polled[k]->fd, chunk, sizeof chunk);
      if (n > 0) {
        polled[k]->stream.buffer.append(chunk, static_cast<std::size_t>(n));
        campaign::readMessages(polled[k]->stream, onFinding);
      } else if (n == 0 || errno != EINTR) {
        polled[k]->open = false;
        ::close(polled[k]->fd);
      }
    }
    campaign::WorkerCounts total;
    for (const Child& c : children) {
      total.cases += c.stream.counts.cases;
      total.diverging += c.stream.counts.diverging;
      total.shrinks += c.stream.counts.shrinks;
      total.shrinkMicroseconds += c.stream.counts.shrinkMicroseconds;
    }
    onCounts(total);
    // Ctrl-C reaches the workers too (same process group); an early stop is forwarded.
    if (!stopSent && (stopRequested() || done())) {
      for (const Child& c : children) ::kill(c.pid, SIGINT);
      stopSent = true;
    }
  }
  for (const Child& c : children) ::waitpid(c.pid, nullptr, 0);
}

}  // namespace wb::cli
