// passcmd/persistent.cpp: see persistent.h.
#include "passcmd/persistent.h"

#include <poll.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>

namespace wb::passcmd {

namespace {

constexpr std::size_t kMaxHeaderDigits = 12;

int millisecondsLeft(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1'000'000));
}

void closeFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Appends what can be read from `fd` now to `into` (up to `cap` bytes in all); false at the
// end of file or an error (the fd is then closed).
bool drain(int& fd, std::string& into, std::size_t cap) {
  std::array<char, 1 << 16> buffer{};
  for (;;) {
    const ssize_t r = ::read(fd, buffer.data(), buffer.size());
    if (r > 0) {
      const std::size_t room = cap - std::min(cap, into.size());
      into.append(buffer.data(), std::min(room, static_cast<std::size_t>(r)));
      continue;
    }
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    closeFd(fd);
    return false;
  }
}

// The printable start of a bad header, for the message.
std::string quoted(std::string_view bytes) {
  std::string s;
  bytes = bytes.substr(0, std::min(bytes.find('\n'), std::size_t{16}));
  for (char c : bytes) s += (c >= 32 && c < 127) ? c : '?';
  return "'" + s + "'";
}

}  // namespace

PersistentSession::PersistentSession(std::string command, ProcessLimits limits)
    : command_(std::move(command)), limits_(limits) {}

PersistentSession::~PersistentSession() {
  if (child_.pid >= 0 && owner_ == ::getpid())
    stop();
  else
    abandon();
}

bool PersistentSession::start(std::string& error) {
  child_ = spawnShell(command_, error);
  if (child_.pid < 0) return false;
  owner_ = ::getpid();
  pending_.clear();
  ++starts_;
  return true;
}

void PersistentSession::abandon() {
  closeFd(child_.in);
  closeFd(child_.out);
  closeFd(child_.err);
  child_.pid = -1;
  pending_.clear();
}

void PersistentSession::stop() {
  const pid_t pid = child_.pid;
  abandon();
  if (pid < 0) return;
  killGroup(pid);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

FrameResult PersistentSession::exchange(std::string_view request) {
  FrameResult result;
  SigPipeBlocked blocked;
  if (child_.pid >= 0 && owner_ != ::getpid()) abandon();
  if (child_.pid >= 0 && (child_.out < 0 || child_.in < 0)) stop();  // it closed a stream with its last answer
  if (child_.pid >= 0) {
    // Between answers the process owes nothing: what it wrote to its standard error is
    // dropped, and anything on its standard output (bytes past its last frame, or the end of
    // file of a process that ended) means the stream is out of step: a fresh process answers.
    std::string ignored;
    if (child_.err >= 0) drain(child_.err, ignored, 0);
    pollfd out{child_.out, POLLIN, 0};
    if (!pending_.empty() || ::poll(&out, 1, 0) != 0) stop();
  }
  if (child_.pid < 0) {
    std::string error;
    if (!start(error)) {
      result.status = FrameStatus::Died;
      result.why = "could not start: " + error;
      return result;
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + limits_.timeout;
  const std::string header = std::to_string(request.size()) + "\n";
  std::size_t written = 0;  // of header + request
  const std::size_t total = header.size() + request.size();
  auto fail = [&](FrameStatus status, std::string why) {
    result.status = status;
    result.why = std::move(why);
    stop();
    return result;
  };
  for (;;) {
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    const bool writing = written < total && child_.in >= 0;
    if (writing) fds[n++] = pollfd{child_.in, POLLOUT, 0};
    if (child_.out >= 0) fds[n++] = pollfd{child_.out, POLLIN, 0};
    if (child_.err >= 0) fds[n++] = pollfd{child_.err, POLLIN, 0};
    const int left = millisecondsLeft(deadline);
    if (left == 0) return fail(FrameStatus::TimedOut, "no answer within " + std::to_string(limits_.timeout.count()) + " ms");
    if (child_.out < 0) {
      // The process closed its standard output: it ended (a crash, whatever its status) or
      // runs on without it (a hang).
      int status = 0;
      const pid_t ended = ::waitpid(child_.pid, &status, WNOHANG);
      if (ended == child_.pid) {
        const pid_t pid = child_.pid;
        abandon();
        ::kill(-pid, SIGKILL);  // what the shell left behind
        result.status = FrameStatus::Died;
        result.why = describeStatus(status) + " before a complete answer";
        return result;
      }
      ::usleep(200);
      if (child_.err >= 0) drain(child_.err, result.err, limits_.maxErrorBytes);
      continue;
    }
    const int ready = ::poll(fds.data(), n, left);
    if (ready < 0 && errno != EINTR) return fail(FrameStatus::Died, "poll failed");
    for (nfds_t i = 0; i < n && ready > 0; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == child_.in) {
        // Header and request in one write where the pipe takes them: the adapter wakes once.
        const std::string_view headerLeft = std::string_view(header).substr(std::min(written, header.size()));
        const std::string_view requestLeft = request.substr(written - (header.size() - headerLeft.size()));
        std::array<iovec, 2> pieces{iovec{const_cast<char*>(headerLeft.data()), headerLeft.size()},
                                    iovec{const_cast<char*>(requestLeft.data()), requestLeft.size()}};
        const ssize_t w = headerLeft.empty() ? ::write(child_.in, requestLeft.data(), requestLeft.size())
                                             : ::writev(child_.in, pieces.data(), 2);
        if (w > 0) written += static_cast<std::size_t>(w);
        // EPIPE: the process does not read any more; its output says what became of it.
        if (w < 0 && errno != EAGAIN && errno != EINTR) closeFd(child_.in);
      } else if (fds[i].fd == child_.err) {
        drain(child_.err, result.err, limits_.maxErrorBytes);
      } else if (fds[i].fd == child_.out) {
        drain(child_.out, pending_, limits_.maxOutputBytes + kMaxHeaderDigits + 2);
      }
    }
    // Is there a whole frame?
    const std::size_t newline = pending_.find('\n');
    if (newline == std::string::npos) {
      if (pending_.size() > kMaxHeaderDigits)
        return fail(FrameStatus::BadFrame, "the frame header " + quoted(pending_) + " is not a byte count");
      continue;
    }
    const std::string_view digits = std::string_view(pending_).substr(0, newline);
    if (digits.empty() || digits.size() > kMaxHeaderDigits ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return fail(FrameStatus::BadFrame, "the frame header " + quoted(pending_) + " is not a byte count");
    const std::size_t count = std::stoull(std::string(digits));
    if (count > limits_.maxOutputBytes)
      return fail(FrameStatus::BadFrame, "the frame announces " + std::to_string(count) + " bytes, more than " +
                                             std::to_string(limits_.maxOutputBytes));
    const std::size_t end = newline + 1 + count;
    if (pending_.size() < end) continue;
    if (pending_.size() > end)
      return fail(FrameStatus::BadFrame, "the frame announces " + std::to_string(count) + " bytes and " +
                                             std::to_string(pending_.size() - newline - 1) + " came");
    if (written < total) return fail(FrameStatus::BadFrame, "an answer came before the whole request was read");
    result.payload = pending_.substr(newline + 1);
    pending_.clear();
    if (child_.err >= 0) drain(child_.err, result.err, limits_.maxErrorBytes);
    return result;
  }
}

}  // namespace wb::passcmd
