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

enum class Reads : std::uint8_t {
  Once,        // in the poll loop: poll says when there is more
  UntilEmpty,  // between answers and after the last one: what is there now
};

// Appends what `fd` has now to `into` (up to `cap` bytes in all; the rest is dropped), through
// `scratch`; false at the end of file or an error (the fd is then closed).
bool readAvailable(int& fd, std::string& into, std::size_t cap, std::vector<char>& scratch, Reads reads) {
  for (;;) {
    const ssize_t r = ::read(fd, scratch.data(), scratch.size());
    if (r > 0) {
      const std::size_t room = cap - std::min(cap, into.size());
      into.append(scratch.data(), std::min(room, static_cast<std::size_t>(r)));
      if (reads == Reads::Once) return true;
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN) return true;
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
  return std::move(exchange(std::span<const std::string_view>(&request, 1)).front());
}

std::vector<FrameResult> PersistentSession::exchange(std::span<const std::string_view> requests) {
  std::vector<FrameResult> results(requests.size());
  SigPipeBlocked blocked;
  if (scratch_.empty()) scratch_.resize(std::size_t{1} << 16);
  for (std::size_t next = 0; next < requests.size();) next = serve(requests, next, results);
  return results;
}

std::size_t PersistentSession::serve(std::span<const std::string_view> requests, std::size_t first,
                                     std::vector<FrameResult>& results) {
  if (child_.pid >= 0 && owner_ != ::getpid()) abandon();
  if (child_.pid >= 0 && (child_.out < 0 || child_.in < 0)) stop();  // it closed a stream with its last answer
  if (child_.pid >= 0) {
    // Between answers the process owes nothing: what it wrote to its standard error is
    // dropped, and anything on its standard output (bytes past its last frame, or the end of
    // file of a process that ended) means the stream is out of step: a fresh process answers.
    std::string ignored;
    if (child_.err >= 0) readAvailable(child_.err, ignored, 0, scratch_, Reads::UntilEmpty);
    pollfd out{child_.out, POLLIN, 0};
    if (!pending_.empty() || ::poll(&out, 1, 0) != 0) stop();
  }
  if (child_.pid < 0) {
    std::string error;
    if (!start(error)) {
      results[first].status = FrameStatus::Died;
      results[first].why = "could not start: " + error;
      return first + 1;
    }
  }
  // The stream to write: each request's header and bytes, in order; requestEnds[i] is where
  // request first + i ends in it (an answer to it is a frame only once it was all written).
  std::vector<std::string> headers;
  std::vector<std::size_t> requestEnds;
  headers.reserve(requests.size() - first);
  requestEnds.reserve(requests.size() - first);
  std::size_t total = 0;
  for (std::size_t i = first; i < requests.size(); ++i) {
    headers.push_back(std::to_string(requests[i].size()) + "\n");
    total += headers.back().size() + requests[i].size();
    requestEnds.push_back(total);
  }
  std::size_t written = 0;
  std::size_t piece = 0;    // the first header or request (2 per request) not all written
  std::size_t pieceAt = 0;  // where it starts in the stream
  auto pieceBytes = [&](std::size_t k) {
    return k % 2 == 0 ? std::string_view(headers[k / 2]) : requests[first + k / 2];
  };

  std::size_t answering = first;  // the oldest request without an answer
  std::string err;                // standard error since the last answer: `answering`'s
  auto deadline = std::chrono::steady_clock::now() + limits_.timeout;
  auto fail = [&](FrameStatus status, std::string why) {
    FrameResult& result = results[answering];
    result.status = status;
    result.why = std::move(why);
    result.err = std::move(err);
    stop();
    return answering + 1;
  };
  for (;;) {
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    if (written < total && child_.in >= 0) fds[n++] = pollfd{child_.in, POLLOUT, 0};
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
        // What it wrote last (why it ended) is in the pipe now, unless what it started holds it open.
        if (child_.err >= 0) readAvailable(child_.err, err, limits_.maxErrorBytes, scratch_, Reads::UntilEmpty);
        const pid_t pid = child_.pid;
        abandon();
        ::kill(-pid, SIGKILL);  // what the shell left behind
        FrameResult& result = results[answering];
        result.status = FrameStatus::Died;
        result.why = describeStatus(status) + " before a complete answer";
        result.err = std::move(err);
        return answering + 1;
      }
      ::usleep(200);
      if (child_.err >= 0) readAvailable(child_.err, err, limits_.maxErrorBytes, scratch_, Reads::UntilEmpty);
      continue;
    }
    const int ready = ::poll(fds.data(), n, left);
    if (ready < 0 && errno != EINTR) return fail(FrameStatus::Died, "poll failed");
    for (nfds_t i = 0; i < n && ready > 0; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == child_.in) {
        // As many frames as the pipe takes in one call: the adapter wakes once for all of them.
        constexpr std::size_t kMaxPieces = 64;
        std::array<iovec, kMaxPieces> pieces{};
        std::size_t count = 0;
        for (std::size_t k = piece; k < 2 * headers.size() && count < kMaxPieces; ++k) {
          const std::string_view bytes = pieceBytes(k);
          const std::size_t skip = k == piece ? written - pieceAt : 0;
          if (bytes.size() > skip) pieces[count++] = iovec{const_cast<char*>(bytes.data()) + skip, bytes.size() - skip};
        }
        const ssize_t w = ::writev(child_.in, pieces.data(), static_cast<int>(count));
        if (w > 0) {
          written += static_cast<std::size_t>(w);
          while (piece < 2 * headers.size() && pieceAt + pieceBytes(piece).size() <= written)
            pieceAt += pieceBytes(piece++).size();
        }
        // EPIPE: the process does not read any more; its output says what became of it.
        if (w < 0 && errno != EAGAIN && errno != EINTR) closeFd(child_.in);
      } else if (fds[i].fd == child_.err) {
        readAvailable(child_.err, err, limits_.maxErrorBytes, scratch_, Reads::Once);
      } else if (fds[i].fd == child_.out) {
        readAvailable(child_.out, pending_, limits_.maxOutputBytes + kMaxHeaderDigits + 2, scratch_, Reads::Once);
      }
    }
    // Every whole frame read is the answer to the oldest request without one. The frames taken
    // are erased once, after the loop: a batch's answers may all be in pending_ at once.
    std::size_t taken = 0;
    for (;;) {
      const std::string_view rest = std::string_view(pending_).substr(taken);
      const std::size_t newline = rest.find('\n');
      if (newline == std::string::npos) {
        if (rest.size() > kMaxHeaderDigits)
          return fail(FrameStatus::BadFrame, "the frame header " + quoted(rest) + " is not a byte count");
        break;
      }
      const std::string_view digits = rest.substr(0, newline);
      if (digits.empty() || digits.size() > kMaxHeaderDigits ||
          !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return fail(FrameStatus::BadFrame, "the frame header " + quoted(rest) + " is not a byte count");
      const std::size_t count = std::stoull(std::string(digits));
      if (count > limits_.maxOutputBytes)
        return fail(FrameStatus::BadFrame, "the frame announces " + std::to_string(count) + " bytes, more than " +
                                               std::to_string(limits_.maxOutputBytes));
      const std::size_t end = newline + 1 + count;
      if (rest.size() < end) break;
      // With requests still unanswered, bytes past a frame are the next answer; past the last
      // answer they are the frame's own (it announced too few).
      const bool last = answering + 1 == requests.size();
      if (last && rest.size() > end)
        return fail(FrameStatus::BadFrame, "the frame announces " + std::to_string(count) + " bytes and " +
                                               std::to_string(rest.size() - newline - 1) + " came");
      if (written < requestEnds[answering - first])
        return fail(FrameStatus::BadFrame, "an answer came before the whole request was read");
      FrameResult& result = results[answering];
      result.payload = std::string(rest.substr(newline + 1, count));
      taken += end;
      if (last) {
        pending_.erase(0, taken);
        if (child_.err >= 0) readAvailable(child_.err, err, limits_.maxErrorBytes, scratch_, Reads::UntilEmpty);
        result.err = std::move(err);
        return requests.size();
      }
      result.err = std::move(err);
      err.clear();
      ++answering;
      deadline = std::chrono::steady_clock::now() + limits_.timeout;
    }
    pending_.erase(0, taken);
  }
}

}  // namespace wb::passcmd
