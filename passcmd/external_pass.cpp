// passcmd/external_pass.cpp: see external_pass.h.
#include "passcmd/external_pass.h"

#include <stdexcept>

#include "core/text.h"

namespace wb::passcmd {

namespace {

// The last lines of a command's standard error, for a failure message: where a crash says why.
std::string tail(std::string_view text, std::size_t maxLines = 6, std::size_t maxBytes = 600) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  // `from` steps back from newline to newline: after k steps it is the newline before the
  // last k lines (or 0).
  std::size_t from = text.size();
  for (std::size_t lines = 0; lines < maxLines && from > 0; ++lines) {
    const std::size_t newline = text.rfind('\n', from - 1);
    if (newline == std::string_view::npos) {
      from = 0;
      break;
    }
    from = newline;
  }
  std::string_view last = text.substr(from);
  if (!last.empty() && last.front() == '\n') last.remove_prefix(1);
  if (last.size() > maxBytes) last = last.substr(last.size() - maxBytes);
  return std::string(last);
}

std::string describeSpec(const InputSpec& s) {
  return std::string(toString(s.kind)) + " " + s.name + (s.target.empty() ? "" : " target='" + s.target + "'");
}

}  // namespace

ExternalPlacement failedPlacement(const Program& program, PassOutcome outcome, std::string why, std::string stdErr) {
  ExternalPlacement r;
  r.placed.program = program;
  r.outcome = outcome;
  std::string err = tail(stdErr);
  r.placed.failure = std::move(why) + (err.empty() ? "" : "; its standard error ends:\n" + err);
  r.stdErr = std::move(stdErr);
  return r;
}

std::string_view toString(PassOutcome outcome) {
  switch (outcome) {
    case PassOutcome::Placed: return "placed";
    case PassOutcome::Crashed: return "crash";
    case PassOutcome::Hung: return "hang";
    case PassOutcome::Malformed: return "malformed output";
  }
  return "?";
}

std::string commandLineWords(const ExternalPass& pass) {
  std::string words = "--pass-cmd '";
  for (char c : pass.command) words += c == '\'' ? std::string("'\\''") : std::string(1, c);
  words += "'";
  if (pass.limits.timeout != ProcessLimits{}.timeout)
    words += " --pass-timeout-ms " + std::to_string(pass.limits.timeout.count());
  if (pass.persistent) words += " --persistent";
  if (pass.form != ProgramForm::ExportedProgram) words += " --pass-form " + std::to_string(static_cast<int>(pass.form));
  return words;
}

std::string requestText(const Program& program, const ExternalPass& pass) {
  if (std::string why = programFormCannotCarry(program, pass.form); !why.empty())
    throw std::invalid_argument("--pass-form: " + why);
  return writeProgram(program, pass.form);
}

std::string inputsMismatch(const Program& program, const Program& placed) {
  const std::vector<InputSpec>& want = program.signature.inputs;
  const std::vector<InputSpec>& got = placed.signature.inputs;
  for (std::size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    if (i >= got.size()) return "input " + std::to_string(i) + " (" + describeSpec(want[i]) + ") is missing";
    if (i >= want.size()) return "input " + std::to_string(i) + " (" + describeSpec(got[i]) + ") is not the program's";
    if (!(want[i] == got[i]))
      return "input " + std::to_string(i) + " is " + describeSpec(got[i]) + ", the program's is " + describeSpec(want[i]);
  }
  return {};
}

ExternalPlacement placeExternally(const Program& program, const ExternalPass& pass) {
  const std::string text = requestText(program, pass);
  ProcessResult run = runShellCommand(pass.command, text, pass.limits);
  const std::string end = describeEnd(run, pass.limits);
  if (!run.startError.empty())
    return failedPlacement(program, PassOutcome::Crashed, "the pass command " + end, std::move(run.err));
  if (run.timedOut) return failedPlacement(program, PassOutcome::Hung, "the pass command hung: " + end, std::move(run.err));
  if (run.outputTooLarge)
    return failedPlacement(program, PassOutcome::Malformed, "the pass command's output is malformed: it " + end, std::move(run.err));
  if (!run.exitedZero()) return failedPlacement(program, PassOutcome::Crashed, "the pass command crashed: " + end, std::move(run.err));
  return readAnswer(program, run.out, std::move(run.err));
}

ExternalPlacement readAnswer(const Program& program, std::string_view answer, std::string stdErr) {
  Result<Program> read = readProgram(answer, "<pass output>");
  if (!read)
    return failedPlacement(program, PassOutcome::Malformed, "the pass command's output is malformed: " + formatAll(read.errors),
                  std::move(stdErr));
  if (std::string why = inputsMismatch(program, *read); !why.empty())
    return failedPlacement(program, PassOutcome::Malformed,
                  "the pass command's output does not correspond to its input: " + why, std::move(stdErr));
  ExternalPlacement r;
  r.placed.program = std::move(*read.value);
  r.stdErr = std::move(stdErr);
  return r;
}

}  // namespace wb::passcmd
