// passcmd/persistent.h: the persistent protocol (docs/pass-protocol.md): one long-lived process
// of the pass under test serves program after program, in frames on its standard input and
// output. A frame is a decimal byte count (ASCII digits only, at most 12 of them), a newline,
// and that many bytes: one program in, the placed program out.
//
// A session starts the process on its first exchange and restarts it after anything that
// leaves the stream out of step: the process died (a crash: the request it was answering is
// the one that killed it), gave no complete answer in time (a hang: its process group is
// killed), or wrote a frame that does not read (a header that is not a count, a count over the
// output cap, more bytes than it announced). Standard error is drained as it comes; what it
// said while answering a request is kept with the answer.
//
// Requests may be pipelined: exchange() of several requests writes them all (as far as the
// pipe takes them) and reads the answers as they come, in order, polling both directions so
// that neither side blocks on a full pipe. Each request gets its own result, as if sent alone:
// the oldest unanswered request is the one the process was working on, so a death, a time-out
// or a bad frame is that request's, and the requests after it go to a fresh process.
//
// A session belongs to the process that started its child: used after a fork, the copy starts
// a child of its own (and leaves the parent's alone).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "passcmd/process.h"

namespace wb::passcmd {

enum class FrameStatus : std::uint8_t {
  Answered,   // `payload` is the answer
  Died,       // the process ended before answering completely (or could not be started)
  TimedOut,   // no complete answer within the time limit
  BadFrame,   // the answer is not a frame (see `why`)
};

struct FrameResult {
  FrameStatus status = FrameStatus::Answered;
  std::string payload;  // Answered: the frame's bytes
  std::string why;      // otherwise: "exit status 3", "no answer within 500 ms", "the frame header ...", ...
  std::string err;      // what the process wrote to its standard error meanwhile (up to the cap)
};

class PersistentSession {
 public:
  PersistentSession(std::string command, ProcessLimits limits);
  PersistentSession(const PersistentSession&) = delete;
  PersistentSession& operator=(const PersistentSession&) = delete;
  ~PersistentSession();

  // Sends `request` as one frame and reads one frame back.
  FrameResult exchange(std::string_view request);
  // Sends every request as a frame and reads their answers: one result per request, in order.
  // The time limit runs per request, from when the answer before it came (or from the start).
  std::vector<FrameResult> exchange(std::span<const std::string_view> requests);

  // Processes started so far (the first one included).
  int starts() const { return starts_; }

 private:
  bool start(std::string& error);
  // Runs requests[first..] through the process (started or restarted as needed) until all are
  // answered or one fails; returns the index after the last request given a result (> first).
  std::size_t serve(std::span<const std::string_view> requests, std::size_t first, std::vector<FrameResult>& results);
  void stop();      // kills the process group and reaps the child
  void abandon();   // closes this process's ends only (a session copied by fork)

  std::string command_;
  ProcessLimits limits_;
  ShellChild child_;
  pid_t owner_ = -1;  // the process that started child_
  std::string pending_;  // answer bytes read but not used yet
  std::vector<char> scratch_;  // what each read lands in (allocated once: reads are per frame)
  int starts_ = 0;
};

}  // namespace wb::passcmd
