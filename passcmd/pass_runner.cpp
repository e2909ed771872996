// passcmd/pass_runner.cpp: see pass_runner.h.
#include "passcmd/pass_runner.h"

#include "core/text.h"

namespace wb::passcmd {

PassRunner::PassRunner(ExternalPass pass) : pass_(std::move(pass)), words_(commandLineWords(pass_)) {
  if (pass_.persistent) session_ = std::make_shared<PersistentSession>(pass_.command, pass_.limits);
}

namespace {

// What a persistent frame makes of `program`.
ExternalPlacement placementOf(const Program& program, FrameResult frame) {
  switch (frame.status) {
    case FrameStatus::Answered: return readAnswer(program, frame.payload, std::move(frame.err));
    case FrameStatus::Died:
      return failedPlacement(program, PassOutcome::Crashed, "the pass command crashed: " + frame.why, std::move(frame.err));
    case FrameStatus::TimedOut:
      return failedPlacement(program, PassOutcome::Hung, "the pass command hung: " + frame.why, std::move(frame.err));
    case FrameStatus::BadFrame:
      return failedPlacement(program, PassOutcome::Malformed, "the pass command's output is malformed: " + frame.why,
                             std::move(frame.err));
  }
  return failedPlacement(program, PassOutcome::Crashed, "the pass command crashed", std::move(frame.err));
}

}  // namespace

ExternalPlacement PassRunner::place(const Program& program) const {
  if (!session_) return placeExternally(program, pass_);
  return placementOf(program, session_->exchange(requestText(program, pass_)));
}

std::vector<ExternalPlacement> PassRunner::placeAll(std::span<const Program> programs) const {
  std::vector<ExternalPlacement> placed;
  placed.reserve(programs.size());
  if (!session_) {
    for (const Program& program : programs) placed.push_back(placeExternally(program, pass_));
    return placed;
  }
  std::vector<std::string> texts;
  texts.reserve(programs.size());
  for (const Program& program : programs) texts.push_back(requestText(program, pass_));
  const std::vector<std::string_view> requests(texts.begin(), texts.end());
  std::vector<FrameResult> frames = session_->exchange(requests);
  for (std::size_t i = 0; i < programs.size(); ++i) placed.push_back(placementOf(programs[i], std::move(frames[i])));
  return placed;
}

}  // namespace wb::passcmd
