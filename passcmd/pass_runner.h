// passcmd/pass_runner.h: an external pass under test run program after program (fuzzing,
// shrinking): the one-shot protocol starts a process per program (external_pass.h), the
// persistent one keeps a process serving frames (persistent.h) and restarts it when it dies,
// hangs or writes a bad frame. Either way each program gets its own outcome: the program a
// persistent process died on is the one that crashed it.
//
// A persistent process may be given several programs at once (placeAll): they are pipelined,
// and each still gets the outcome it would get alone.
//
// A PassRunner is a cheap handle: copies share the persistent process (it is started on the
// first program; after a fork, the child's copy starts its own).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/ir.h"
#include "passcmd/external_pass.h"
#include "passcmd/persistent.h"

namespace wb::passcmd {

class PassRunner {
 public:
  explicit PassRunner(ExternalPass pass);

  // The placed program of `program`, or the outcome that is a finding of its own kind.
  ExternalPlacement place(const Program& program) const;
  // place() of each program, in order; a persistent process gets them all in flight at once
  // (one wake-up for several programs instead of one per program).
  std::vector<ExternalPlacement> placeAll(std::span<const Program> programs) const;

  const ExternalPass& pass() const { return pass_; }
  // commandLineWords(pass()): what reports, artifacts and replay lines call this pass.
  const std::string& words() const { return words_; }
  // Persistent: the processes started so far; one-shot: 0.
  int processStarts() const { return session_ ? session_->starts() : 0; }

 private:
  ExternalPass pass_;
  std::string words_;
  std::shared_ptr<PersistentSession> session_;  // persistent only
};

}  // namespace wb::passcmd
