// passcmd/process.h: runs a shell command as a child process with bytes on its standard input,
// collects its standard output and standard error, and stops it at a deadline or an output cap.
//
// POSIX only (fork, pipes, poll, process groups). The child runs `/bin/sh -c COMMAND` in a
// process group of its own, so that a timeout kills whatever the shell started too. Nothing
// here keeps state between calls, installs signal handlers or touches the caller's file
// descriptors other than the pipes it creates.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace wb::passcmd {

struct ProcessLimits {
  std::chrono::milliseconds timeout{10'000};   // wall clock, from the start to the child's exit
  std::size_t maxOutputBytes = std::size_t{256} << 20;  // standard output; past it the child is killed
  std::size_t maxErrorBytes = std::size_t{1} << 20;     // standard error beyond it is dropped
};

struct ProcessResult {
  std::string out;   // standard output (up to the cap)
  std::string err;   // standard error (its first maxErrorBytes)
  int exitCode = -1;       // when the child exited by itself
  int signal = 0;          // when a signal ended it (SIGKILL after a timeout or the cap too)
  bool timedOut = false;   // killed at the deadline
  bool outputTooLarge = false;  // killed when its output passed the cap
  std::string startError;  // the command could not be started (fork or pipe failed); nothing ran
  bool exitedZero() const { return startError.empty() && !timedOut && !outputTooLarge && signal == 0 && exitCode == 0; }
};

// Runs `command` with `input` on its standard input (closed once written; a child that exits
// without reading it all is not an error of this function).
ProcessResult runShellCommand(const std::string& command, std::string_view input, const ProcessLimits& limits);

// "exit status 3", "killed by signal 11 (SIGSEGV)", "no answer within 500 ms", ...
std::string describeEnd(const ProcessResult& result, const ProcessLimits& limits);

// ---------------------------------------------------------------------------------------------
// The pieces runShellCommand is made of, for a child that outlives one exchange
// (persistent.h).

// A running `/bin/sh -c COMMAND` in a process group of its own, and this process's ends of the
// pipes to its standard input, output and error (non-blocking, close-on-exec; -1 once closed).
struct ShellChild {
  pid_t pid = -1;
  int in = -1, out = -1, err = -1;
};
// Starts one; on failure, nullopt-like: pid -1 and `error` says why.
ShellChild spawnShell(const std::string& command, std::string& error);

// SIGKILL to the child's process group and to the child.
void killGroup(pid_t pid);

// "exit status 3" or "killed by signal 11 (SIGSEGV)" for a waitpid status.
std::string describeStatus(int status);

// Writing to a child that has closed its standard input raises SIGPIPE, which would end this
// process. The signal is blocked in this thread while an instance lives, and a SIGPIPE raised
// meanwhile is taken off the pending set before the old mask comes back.
class SigPipeBlocked {
 public:
  SigPipeBlocked();
  SigPipeBlocked(const SigPipeBlocked&) = delete;
  SigPipeBlocked& operator=(const SigPipeBlocked&) = delete;
  ~SigPipeBlocked();

 private:
  sigset_t pipe_{}, old_{};
  bool wasPending_ = false;
};

}  // namespace wb::passcmd
