// cli/fuzz_cmd.cpp: `wbcheck fuzz [--time S | --cases N] [--seed S] [--placement P] [--mode M]
// [--nodes N] [--out DIR] [--jobs J] [--until-found] [--until-classes LIST]`: generates programs,
// checks them with one placement, shrinks and writes every new finding, prints a summary.
//
// The logic (cases, classification, shrinking, deduplication, artifacts) is campaign/; this
// file adds what a process needs: time limits, Ctrl-C, worker processes and pipes, progress
// lines on a terminal, files.
#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/common.h"
#include "campaign/campaign.h"

namespace wb::cli {

namespace {

// The one mutable static of the program, and why: a signal handler can do nothing but set a
// flag of this type. SIGINT (Ctrl-C) sets it; the case loop and the parent's poll loop read it
// and stop after the current case, so the summary is still printed and nothing is half-written.
volatile std::sig_atomic_t gStopRequested = 0;

extern "C" void onInterrupt(int) { gStopRequested = 1; }

using Clock = std::chrono::steady_clock;

struct FuzzCmdOptions {
  double seconds = 0;      // 0: not given
  std::uint64_t cases = 0; // 0: not given
  std::uint64_t seed = 1;
  std::string placement = "early";
  std::string mode;        // empty: drawn per case
  int nodes = 10;
  std::string out = "fuzz-findings";
  int jobs = 1;
  bool untilFound = false;
  std::string untilClasses;  // "all" or comma-separated hazard ids
};

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// What one worker (a process, or the only one) does: run cases of its seed stream until its
// share of --cases is done, the time is up, or a stop is requested; shrink each finding it has
// not seen before and hand the record to `report`.
struct WorkerConfig {
  campaign::CampaignOptions campaign;
  std::uint64_t runSeed = 0;
  int job = 0;
  int jobs = 1;
  std::uint64_t cases = 0;   // total over all jobs; 0: unlimited
  double seconds = 0;        // 0: unlimited
  Clock::time_point start;
  std::string outDir;
  std::string foundBy;
};

struct WorkerCounts {
  std::uint64_t cases = 0;
  std::uint64_t diverging = 0;  // cases on which the placement diverged or failed
};

// Which findings to shrink. Shrinking costs about ten cases, and a third of the cases of a
// buggy placement diverge, so not all: the first few per unshrunk key give the distinct
// shapes; beyond that, a case is still shrunk while one of the classes its program matches
// (it may shrink to any of them) has been found fewer than kShrunkPerClass times.
constexpr int kShrinksPerUnshrunkKey = 12;
constexpr int kShrunkPerClass = 3;

void runWorker(const WorkerConfig& config, const std::function<void(const campaign::FindingRecord&)>& report,
               const std::function<void(const WorkerCounts&)>& progress, const std::function<bool()>& stop) {
  const gen::Generator generator(campaign::campaignGenOptions(config.campaign));
  const SchemaTable& builtins = generator.schemas();
  oracle::Checker checker;  // this worker's: carries op classifications and buffers across cases
  std::map<std::string, int> shrinksByUnshrunkKey;
  std::map<campaign::HazardClass, int> shrunkByClass;
  std::set<std::string> seenShapes;
  WorkerCounts counts;
  Clock::time_point lastProgress = Clock::now();
  const std::uint64_t myCases =
      config.cases == 0 ? 0
                        : (config.cases + static_cast<std::uint64_t>(config.jobs - config.job - 1)) /
                              static_cast<std::uint64_t>(config.jobs);
  for (std::uint64_t i = 0; myCases == 0 || i < myCases; ++i) {
    if (gStopRequested || stop()) break;
    if (config.seconds > 0 && secondsSince(config.start) >= config.seconds) break;
    const std::uint64_t seed = campaign::caseSeed(config.runSeed, config.job, i);
    const campaign::CaseResult result = campaign::runCase(seed, config.campaign, generator, checker);
    ++counts.cases;
    if (result.finding) {
      ++counts.diverging;
      const double foundAt = secondsSince(config.start);
      const bool mayAddAClass = std::any_of(result.features.begin(), result.features.end(),
                                            [&](campaign::HazardClass h) { return shrunkByClass[h] < kShrunkPerClass; });
      if (shrinksByUnshrunkKey[campaign::describe(*result.finding)]++ < kShrinksPerUnshrunkKey || mayAddAClass) {
        const campaign::ShrunkFinding shrunk =
            campaign::shrinkFinding(result.program, *result.finding, seed, config.campaign.inputs, builtins);
        campaign::FindingRecord record;
        record.key = shrunk.key;
        ++shrunkByClass[shrunk.key.hazard];
        record.shape = campaign::shapeOf(shrunk.program);
        record.seed = seed;
        record.secondsToFind = foundAt;
        record.bodyNodes = shrunk.bodyNodesAfter;
        record.count = 1;
        const std::string name = campaign::artifactFileName(record.key, record.shape);
        const std::string path = (std::filesystem::path(config.outDir) / name).string();
        campaign::ArtifactInfo info{WBCHECK_VERSION, seed, config.foundBy, std::string(gen::toString(result.mode))};
        record.artifact = campaign::formatArtifact(shrunk, info, path);
        // A repeat of a shape this worker already reported only adds to its count.
        if (!seenShapes.insert(campaign::describe(record.key) + record.shape).second) record.artifact.clear();
        report(record);
      }
    }
    if (std::chrono::duration<double>(Clock::now() - lastProgress).count() > 0.25) {
      progress(counts);
      lastProgress = Clock::now();
    }
  }
  progress(counts);
}

// ---------------------------------------------------------------------------------------------
// Worker processes talk to the parent over a pipe: "P <cases> <diverging>\n" progress lines
// and "F <bytes>\n<encoded record>" findings.

bool writeAll(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  WorkerCounts counts;
  bool open = true;
};

// Parses every complete message in `child.buffer`.
void drainMessages(Child& child, const std::function<void(campaign::FindingRecord)>& onFinding) {
  for (;;) {
    const std::size_t newline = child.buffer.find('\n');
    if (newline == std::string::npos) return;
    std::istringstream head(child.buffer.substr(0, newline));
    char tag = 0;
    head >> tag;
    if (tag == 'P') {
      head >> child.counts.cases >> child.counts.diverging;
      child.buffer.erase(0, newline + 1);
    } else if (tag == 'F') {
      std::size_t bytes = 0;
      head >> bytes;
      if (child.buffer.size() < newline + 1 + bytes) return;  // wait for the rest
      if (std::optional<campaign::FindingRecord> r = campaign::decodeRecord(child.buffer.substr(newline + 1, bytes)))
        onFinding(std::move(*r));
      child.buffer.erase(0, newline + 1 + bytes);
    } else {
      child.buffer.erase(0, newline + 1);  // unknown line: skip
    }
  }
}

// ---------------------------------------------------------------------------------------------

struct Run {
  campaign::FindingTable table;
  std::vector<std::string> written;
  std::uint64_t cases = 0, diverging = 0;
  bool writeFailed = false;
};

std::string progressLine(const Run& run, double elapsed) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << "\r[fuzz] " << run.cases << " cases, " << (elapsed > 0 ? run.cases / elapsed : 0.0) << " cases/s, "
    << run.diverging << " diverging, " << run.table.records().size() << " findings";
  const auto counts = run.table.countsByHazard();
  if (!counts.empty()) {
    s << " (";
    bool first = true;
    for (const auto& [label, n] : counts) {
      s << (first ? "" : ", ") << label.substr(0, label.find(' ')) << ": " << n;
      first = false;
    }
    s << ")";
  }
  s << ", " << elapsed << " s   ";
  return s.str();
}

int runFuzz(const FuzzCmdOptions& options, const std::vector<std::string>& argv) {
  const char* me = "wbcheck fuzz";
  std::optional<Placement> placement = placementFromString(options.placement);
  if (!placement) {
    std::cerr << me << ": unknown placement '" << options.placement << "'\n";
    return kInputError;
  }
  campaign::CampaignOptions caseOptions;
  caseOptions.placement = *placement;
  caseOptions.maxNodes = options.nodes;
  if (!options.mode.empty()) {
    caseOptions.mode = gen::genModeFromString(options.mode);
    if (!caseOptions.mode) {
      std::cerr << me << ": unknown mode '" << options.mode << "' (realistic | adversarial)\n";
      return kInputError;
    }
  }
  if (options.nodes < 1 || options.nodes > 1000 || options.jobs < 1 || options.jobs > 256 || options.seconds < 0) {
    std::cerr << me << ": --nodes must be in 1..1000, --jobs in 1..256, --time >= 0\n";
    return kInputError;
  }
  std::vector<campaign::HazardClass> wanted;
  if (options.untilClasses == "all") {
    wanted = campaign::expectedHazards(*placement);
  } else if (!options.untilClasses.empty()) {
    std::istringstream list(options.untilClasses);
    for (std::string id; std::getline(list, id, ',');) {
      std::optional<campaign::HazardClass> h = campaign::hazardFromId(id);
      if (!h) {
        std::cerr << me << ": unknown hazard class '" << id << "'; known:";
        for (campaign::HazardClass k : campaign::allHazardClasses()) std::cerr << " " << campaign::hazardId(k);
        std::cerr << "\n";
        return kInputError;
      }
      wanted.push_back(*h);
    }
  }
  std::error_code ec;
  std::filesystem::create_directories(options.out, ec);
  if (ec) {
    std::cerr << me << ": cannot create " << options.out << ": " << ec.message() << "\n";
    return kInputError;
  }

  WorkerConfig config;
  config.campaign = caseOptions;
  config.runSeed = options.seed;
  config.jobs = options.jobs;
  config.cases = options.cases;
  config.seconds = options.cases == 0 && options.seconds == 0 ? 60.0 : options.seconds;
  config.start = Clock::now();
  config.outDir = options.out;
  for (const std::string& a : argv) config.foundBy += (config.foundBy.empty() ? "" : " ") + a;

  const bool showProgress = stderrIsTerminal();
  Run run;
  auto done = [&] {
    if (options.untilFound && !run.table.empty()) return true;
    return !wanted.empty() && run.table.hasAll(wanted);
  };
  auto record = [&](campaign::FindingRecord r) {
    const std::string artifact = r.artifact;
    const std::string name = campaign::artifactFileName(r.key, r.shape);
    if (run.table.add(std::move(r)) && !artifact.empty()) {
      const std::string path = (std::filesystem::path(options.out) / name).string();
      if (writeFileAtomically(path, artifact)) run.written.push_back(path);
      else run.writeFailed = true;
    }
  };
  Clock::time_point lastLine = Clock::now();
  auto show = [&](bool force) {
    if (!showProgress) return;
    if (!force && std::chrono::duration<double>(Clock::now() - lastLine).count() < 0.5) return;
    std::cerr << progressLine(run, secondsSince(config.start)) << std::flush;
    lastLine = Clock::now();
  };

  struct sigaction action {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  struct sigaction previous {};
  ::sigaction(SIGINT, &action, &previous);

  if (options.jobs == 1) {
    runWorker(config, record,
              [&](const WorkerCounts& c) {
                run.cases = c.cases;
                run.diverging = c.diverging;
                show(false);
              },
              done);
  } else {
    std::vector<Child> children;
    for (int job = 0; job < options.jobs; ++job) {
      int fds[2];
      if (::pipe(fds) != 0) {
        std::cerr << me << ": pipe failed\n";
        break;
      }
      std::cout.flush();
      std::cerr.flush();
      const pid_t pid = ::fork();
      if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        std::cerr << me << ": fork failed\n";
        break;
      }
      if (pid == 0) {  // the worker: its own seed stream, results to the pipe, then exit
        ::close(fds[0]);
        for (const Child& c : children) ::close(c.fd);
        WorkerConfig mine = config;
        mine.job = job;
        bool pipeOk = true;
        runWorker(mine,
                  [&](const campaign::FindingRecord& r) {
                    const std::string body = campaign::encodeRecord(r);
                    pipeOk = pipeOk && writeAll(fds[1], "F " + std::to_string(body.size()) + "\n" + body);
                  },
                  [&](const WorkerCounts& c) {
                    pipeOk = pipeOk && writeAll(fds[1], "P " + std::to_string(c.cases) + " " +
                                                            std::to_string(c.diverging) + "\n");
                  },
                  [&] { return !pipeOk; });
        ::close(fds[1]);
        ::_exit(0);
      }
      ::close(fds[1]);
      children.push_back(Child{pid, fds[0], {}, {}, true});
    }
    bool stopSent = false;
    for (;;) {
      std::vector<pollfd> polls;
      std::vector<Child*> polled;
      for (Child& c : children)
        if (c.open) {
          polls.push_back({c.fd, POLLIN, 0});
          polled.push_back(&c);
        }
      if (polls.empty()) break;
      const int ready = ::poll(polls.data(), polls.size(), 200);
      if (ready < 0 && errno != EINTR) break;
      for (std::size_t k = 0; ready > 0 && k < polls.size(); ++k) {
        if (!(polls[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char chunk[65536];
        const ssize_t n = ::read(polled[k]->fd, chunk, sizeof chunk);
        if (n > 0) {
          polled[k]->buffer.append(chunk, static_cast<std::size_t>(n));
          drainMessages(*polled[k], record);
        } else if (n == 0 || errno != EINTR) {
          polled[k]->open = false;
          ::close(polled[k]->fd);
        }
      }
      run.cases = run.diverging = 0;
      for (const Child& c : children) {
        run.cases += c.counts.cases;
        run.diverging += c.counts.diverging;
      }
      show(false);
      // Ctrl-C reaches the workers too (same process group); an early stop is forwarded.
      if (!stopSent && (gStopRequested || done())) {
        for (const Child& c : children) ::kill(c.pid, SIGINT);
        stopSent = true;
      }
    }
    for (const Child& c : children) ::waitpid(c.pid, nullptr, 0);
  }
  ::sigaction(SIGINT, &previous, nullptr);

  const double elapsed = secondsSince(config.start);
  if (showProgress) std::cerr << progressLine(run, elapsed) << "\n";
  std::cout << provenanceComment(argv);
  std::printf("placement %s, seed %llu, %llu cases in %.1f s (%.1f cases/s), %llu diverging%s\n",
              options.placement.c_str(), static_cast<unsigned long long>(options.seed),
              static_cast<unsigned long long>(run.cases), elapsed, elapsed > 0 ? run.cases / elapsed : 0.0,
              static_cast<unsigned long long>(run.diverging), gStopRequested ? " (interrupted)" : "");
  std::fflush(stdout);
  if (run.table.empty()) {
    std::cout << "no findings\n";
  } else {
    std::cout << run.table.formatSummary();
    for (const std::string& path : run.written) std::cout << "wrote " << path << "\n";
  }
  if (run.writeFailed) std::cerr << me << ": some findings could not be written to " << options.out << "\n";
  return run.table.empty() ? kHolds : kViolated;
}

}  // namespace

void registerFuzz(CLI::App& app, Action& action, const std::vector<std::string>& argv) {
  auto options = std::make_shared<FuzzCmdOptions>();
  CLI::App* sub = app.add_subcommand(
      "fuzz",
      "Generate and check programs with one placement; shrink and write every new finding.\n"
      "Exit codes: 0 nothing found, 1 something found, 2 usage or input error.");
  auto* time = sub->add_option("--time", options->seconds, "stop after S seconds (default 60 if --cases is not given)");
  sub->add_option("--cases", options->cases, "stop after N cases (over all jobs)")->excludes(time);
  sub->add_option("--seed", options->seed, "run seed: case seeds are derived from it and the job index")->capture_default_str();
  sub->add_option("--placement", options->placement, "early | end | upstream | pr20744 | draft13857")->capture_default_str();
  sub->add_option("--mode", options->mode, "realistic | adversarial (default: drawn per case)");
  sub->add_option("--nodes", options->nodes, "maximum body nodes per generated program")->capture_default_str();
  sub->add_option("--out", options->out, "directory for the shrunk findings (one form-1 file each)")->capture_default_str();
  sub->add_option("--jobs", options->jobs, "worker processes, each with its own seed stream")->capture_default_str();
  sub->add_flag("--until-found", options->untilFound, "stop at the first finding");
  sub->add_option("--until-classes", options->untilClasses,
                  "stop once every listed hazard class was found: comma-separated ids (h5_view_copy, ...) or "
                  "'all' (every class executorch-semantics attributes to the placement)");
  sub->callback([&action, options, argv] { action = [options, argv] { return runFuzz(*options, argv); }; });
}

}  // namespace wb::cli
