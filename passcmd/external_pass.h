// passcmd/external_pass.h: a pass under test that is a program of its own (issue 19): any
// command that reads a program on its standard input and prints the placed program on its
// standard output. The one-shot protocol is docs/pass-protocol.md:
//
//   wbcheck writes the program in form 1 (as `wbcheck gen` prints it; --pass-form chooses form 2
//   or 3) to the command's standard input and closes it; the command prints the placed program (any form the reader accepts)
//   and exits 0.
//
// Anything else is a finding of its own kind, never a skipped case: a non-zero exit or a signal
// (Crashed), no answer within the time limit (Hung), or output that does not read as a program
// or whose inputs do not correspond to the program's (Malformed). A placed program that reads
// is the oracle's to judge (a wrong placement, a dropped write-back, a wrong output layout).
//
// This module runs processes; it knows the program text (core) and nothing of the oracle.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/ir.h"
#include "core/placement.h"
#include "core/text.h"
#include "passcmd/process.h"

namespace wb::passcmd {

enum class PassOutcome : std::uint8_t { Placed, Crashed, Hung, Malformed };

// "placed", "crash", "hang", "malformed output"
std::string_view toString(PassOutcome outcome);

struct ExternalPass {
  std::string command;   // run with /bin/sh -c
  ProcessLimits limits;  // the time limit is the protocol's (--pass-timeout-ms), per program
  bool persistent = false;  // the persistent protocol (persistent.h; PassRunner runs it)
  // The printed form the command gets on its standard input (--pass-form; core/text.h). Its
  // answer may be in any form the reader reads.
  ProgramForm form = ProgramForm::ExportedProgram;
};

// The text `pass` gets for `program`: `program` in pass.form. A form that cannot carry the
// program (programFormCannotCarry) is a caller's error, checked before (std::invalid_argument):
// the pass is never given less than the program.
std::string requestText(const Program& program, const ExternalPass& pass);

// The command-line words that select `pass`, for reports, artifacts and replay lines:
// "--pass-cmd 'python3 end.py'" (quoted for a POSIX shell), with " --pass-timeout-ms T" when
// the limit is not the default one, " --persistent" for the persistent protocol and
// " --pass-form N" for a form other than 1.
std::string commandLineWords(const ExternalPass& pass);

struct ExternalPlacement {
  // The placed program, or (outcome other than Placed) the input with `failure` set to what
  // went wrong: "the pass command crashed (exit status 3): <the end of its standard error>".
  PlacedProgram placed;
  PassOutcome outcome = PassOutcome::Placed;
  std::string stdErr;  // the command's standard error (its first ProcessLimits::maxErrorBytes)
};

// Runs the command on `program` (one process per call: the one-shot protocol, whatever
// pass.persistent says).
ExternalPlacement placeExternally(const Program& program, const ExternalPass& pass);

// What an answer (the command's standard output, or a persistent frame) makes of `program`:
// a placed program, or Malformed when it does not read or its inputs are not the program's.
ExternalPlacement readAnswer(const Program& program, std::string_view answer, std::string stdErr);

// A placement that is the finding of its own kind `outcome`: the input, with `why` and the end of
// the command's standard error as its failure.
ExternalPlacement failedPlacement(const Program& program, PassOutcome outcome, std::string why, std::string stdErr);

// Why a placed program's inputs do not correspond to `program`'s: the same placeholders, in the
// same order, with the same input specs (kind, target, persistence). Empty when they do. A pass
// inserts copies and may rename or reorder outputs, but the inputs are the caller's contract.
std::string inputsMismatch(const Program& program, const Program& placed);

}  // namespace wb::passcmd
