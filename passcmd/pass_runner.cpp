// passcmd/pass_runner.cpp: see pass_runner.h.
#include "passcmd/pass_runner.h"

#include "core/text.h"

namespace wb::passcmd {

PassRunner::PassRunner(ExternalPass pass) : pass_(std::move(pass)), words_(commandLineWords(pass_)) {
  if (pass_.persistent) session_ = std::make_shared<PersistentSession>(pass_.command, pass_.limits);
}

ExternalPlacement PassRunner::place(const Program& program) const {
  if (!session_) return placeExternally(program, pass_);
  FrameResult frame = session_->exchange(requestText(program, pass_));
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

}  // namespace wb::passcmd
