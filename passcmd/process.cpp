// passcmd/process.cpp: see process.h.
#include "passcmd/process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

extern char** environ;

namespace wb::passcmd {

namespace {

// A file descriptor closed when it goes out of scope.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct Pipe {
  Fd read, write;
};

bool makePipe(Pipe& p) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  p.read.fd = fds[0];
  p.write.fd = fds[1];
  return true;
}

void setNonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

int millisecondsLeft(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<long long>(left.count(), 1'000'000));
}

}  // namespace

SigPipeBlocked::SigPipeBlocked() {
  sigemptyset(&pipe_);
  sigaddset(&pipe_, SIGPIPE);
  sigset_t pending;
  sigpending(&pending);
  wasPending_ = sigismember(&pending, SIGPIPE) == 1;
  pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
}

SigPipeBlocked::~SigPipeBlocked() {
  if (!wasPending_) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &zero) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_, nullptr);
}

void killGroup(pid_t pid) {
  ::kill(-pid, SIGKILL);  // the shell's process group: what it started too
  ::kill(pid, SIGKILL);
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) {
    const int signal = WTERMSIG(status);
    const char* name = sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exit status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

ShellChild spawnShell(const std::string& command, std::string& error) {
  ShellChild child;
  Pipe in, out, err;
  if (!makePipe(in) || !makePipe(out) || !makePipe(err)) {
    error = std::string("pipe: ") + std::strerror(errno);
    return child;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read.fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write.fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err.write.fd, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  std::string shell = "/bin/sh", dashC = "-c", cmd = command;
  std::array<char*, 4> argv{shell.data(), dashC.data(), cmd.data(), nullptr};
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    error = std::string("posix_spawn /bin/sh: ") + std::strerror(spawned);
    return child;
  }
  setNonBlocking(in.write.fd);
  setNonBlocking(out.read.fd);
  setNonBlocking(err.read.fd);
  child.pid = pid;
  child.in = std::exchange(in.write.fd, -1);
  child.out = std::exchange(out.read.fd, -1);
  child.err = std::exchange(err.read.fd, -1);
  return child;
}

ProcessResult runShellCommand(const std::string& command, std::string_view input, const ProcessLimits& limits) {
  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() + limits.timeout;
  SigPipeBlocked blocked;
  const ShellChild child = spawnShell(command, result.startError);
  if (child.pid < 0) return result;
  const pid_t pid = child.pid;
  Fd inWrite(child.in), outRead(child.out), errRead(child.err);

  std::size_t written = 0;
  if (input.empty()) inWrite.reset();
  std::array<char, 1 << 16> buffer{};
  bool killed = false;
  while ((inWrite.fd >= 0 || outRead.fd >= 0 || errRead.fd >= 0) && !killed) {
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    auto add = [&](int fd, short events) {
      if (fd >= 0) fds[n++] = pollfd{fd, events, 0};
    };
    add(inWrite.fd, POLLOUT);
    add(outRead.fd, POLLIN);
    add(errRead.fd, POLLIN);
    const int left = millisecondsLeft(deadline);
    if (left == 0) {
      result.timedOut = true;
      killGroup(pid);
      killed = true;
      break;
    }
    const int ready = ::poll(fds.data(), n, left);
    if (ready < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < n && ready > 0; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == inWrite.fd) {
        const ssize_t w = ::write(inWrite.fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<std::size_t>(w);
        // EPIPE: the child does not read any more; what it does with that is its answer.
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) inWrite.reset();
        continue;
      }
      Fd& source = fds[i].fd == outRead.fd ? outRead : errRead;
      std::string& into = fds[i].fd == outRead.fd ? result.out : result.err;
      const ssize_t r = ::read(source.fd, buffer.data(), buffer.size());
      if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
        source.reset();
        continue;
      }
      if (r < 0) continue;
      if (&into == &result.err) {
        const std::size_t room = limits.maxErrorBytes - std::min(limits.maxErrorBytes, into.size());
        into.append(buffer.data(), std::min(room, static_cast<std::size_t>(r)));
      } else {
        into.append(buffer.data(), static_cast<std::size_t>(r));
        if (into.size() > limits.maxOutputBytes) {
          result.outputTooLarge = true;
          killGroup(pid);
          killed = true;
        }
      }
    }
  }
  // The pipes are closed (or the child was killed): wait for it to end, up to the deadline,
  // without reaping it yet. While the ended shell is a zombie its process group cannot be
  // reused, so killing the group then reaches only what the shell left behind.
  while (true) {
    siginfo_t info{};
    const int w = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT | (killed ? 0 : WNOHANG));
    if (w == 0 && info.si_pid == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (w == 0 && millisecondsLeft(deadline) == 0) {
      result.timedOut = true;
      killGroup(pid);
      killed = true;
      continue;
    }
    if (w == 0) ::usleep(200);
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::string describeEnd(const ProcessResult& result, const ProcessLimits& limits) {
  if (!result.startError.empty()) return "could not start: " + result.startError;
  if (result.timedOut) return "no answer within " + std::to_string(limits.timeout.count()) + " ms";
  if (result.outputTooLarge) return "printed more than " + std::to_string(limits.maxOutputBytes) + " bytes";
  if (result.signal != 0) {
    const char* name = sigabbrev_np(result.signal);
    return "killed by signal " + std::to_string(result.signal) + (name ? std::string(" (SIG") + name + ")" : "");
  }
  return "exit status " + std::to_string(result.exitCode);
}

}  // namespace wb::passcmd
