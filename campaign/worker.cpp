// campaign/worker.cpp: one fuzzing worker and its messages (see campaign/worker.h).
#include "campaign/worker.h"

#include <filesystem>
#include <set>
#include <sstream>
#include <vector>

namespace wb::campaign {

namespace {

using Clock = std::chrono::steady_clock;

// Cases in flight at once through a persistent pass command. Each batch costs the worker and its
// pass a switch each way, and after a switch each runs on caches the other filled: the longer
// each runs between switches, the less that costs. 64 generated programs (or their answers) come
// to about a pipe's 64 KiB.
constexpr std::uint64_t kPersistentBatch = 64;

double secondsSince(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

std::uint64_t casesOfJob(std::uint64_t total, int job, int jobs) {
  if (total == 0) return 0;
  return (total + static_cast<std::uint64_t>(jobs - job - 1)) / static_cast<std::uint64_t>(jobs);
}

void runWorker(const WorkerConfig& config, const std::function<void(const FindingRecord&)>& report,
               const std::function<void(const WorkerCounts&)>& progress, const std::function<bool()>& stop) {
  const gen::Generator generator(campaignGenOptions(config.campaign));
  const SchemaTable& builtins = generator.schemas();
  oracle::Checker checker;  // this worker's: carries op classifications and buffers across cases
  ShrinkCounts shrinkCounts;
  std::set<std::string> seenShapes;
  WorkerCounts counts;
  Clock::time_point lastProgress = Clock::now();
  const std::uint64_t myCases = casesOfJob(config.cases, config.job, config.jobs);
  // Counts a case; shrinks and reports its finding when the policy selects it.
  auto take = [&](const CaseResult& result) {
    const std::uint64_t seed = result.seed;
    ++counts.cases;
    if (result.finding) {
      ++counts.diverging;
      const double foundAt = secondsSince(config.start);
      if (selectForShrinking(config.shrink, shrinkCounts, *result.finding, result.features)) {
        const Clock::time_point shrinkStart = Clock::now();
        const ShrunkFinding shrunk = shrinkFinding(
            result.program, *result.finding, seed, config.campaign.inputs, builtins, config.campaign.placeWith,
            config.campaign.passCmd ? &*config.campaign.passCmd : nullptr, config.campaign.behaviours);
        ++counts.shrinks;
        counts.shrinkMicroseconds += static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - shrinkStart).count());
        countShrunk(shrinkCounts, shrunk.key.hazard);
        FindingRecord record;
        record.key = shrunk.key;
        record.shape = shapeOf(shrunk.program);
        record.seed = seed;
        record.secondsToFind = foundAt;
        record.bodyNodes = shrunk.bodyNodesAfter;
        record.count = 1;
        const std::string path =
            (std::filesystem::path(config.outDir) / artifactFileName(record.key, record.shape)).string();
        const ArtifactInfo info{WBCHECK_VERSION, seed, config.foundBy, std::string(gen::toString(result.mode)),
                                config.draw ? pictureFileName(path) : std::string()};
        record.artifact = formatArtifact(shrunk, info, path);
        if (!seenShapes.insert(describe(record.key) + record.shape).second) record.artifact.clear();
        report(record);
      }
    }
  };
  // A persistent pass command gets its cases a few at a time, in flight together (runCases):
  // enough to wake it once per batch, few enough that a stop or the time limit waits for little.
  const std::uint64_t batch =
      config.campaign.passCmd && config.campaign.passCmd->pass().persistent ? kPersistentBatch : 1;
  std::vector<std::uint64_t> seeds;
  for (std::uint64_t i = 0; myCases == 0 || i < myCases;) {
    if (stop()) break;
    if (config.seconds > 0 && secondsSince(config.start) >= config.seconds) break;
    seeds.clear();
    for (; seeds.size() < batch && (myCases == 0 || i < myCases); ++i) seeds.push_back(caseSeed(config.runSeed, config.job, i));
    const std::vector<CaseResult> results = runCases(seeds, config.campaign, generator, checker);
    for (std::size_t k = 0; k < results.size(); ++k) {
      // After a finding (its shrinking may have taken long), a stop asked for meanwhile ends the
      // batch: the cases after it are not counted.
      if (k > 0 && results[k - 1].finding && stop()) break;
      take(results[k]);
    }
    if (std::chrono::duration<double>(Clock::now() - lastProgress).count() > 0.25) {
      progress(counts);
      lastProgress = Clock::now();
    }
  }
  progress(counts);
}

std::string progressMessage(const WorkerCounts& counts) {
  return "P " + std::to_string(counts.cases) + " " + std::to_string(counts.diverging) + " " +
         std::to_string(counts.shrinks) + " " + std::to_string(counts.shrinkMicroseconds) + "\n";
}

std::string findingMessage(const FindingRecord& record) {
  const std::string body = encodeRecord(record);
  return "F " + std::to_string(body.size()) + "\n" + body;
}

void readMessages(WorkerStream& stream, const std::function<void(FindingRecord)>& onFinding) {
  std::string& buffer = stream.buffer;
  for (;;) {
    const std::size_t newline = buffer.find('\n');
    if (newline == std::string::npos) return;
    std::istringstream head(buffer.substr(0, newline));
    char tag = 0;
    head >> tag;
    if (tag == 'P') {
      head >> stream.counts.cases >> stream.counts.diverging >> stream.counts.shrinks >> stream.counts.shrinkMicroseconds;
      buffer.erase(0, newline + 1);
    } else if (tag == 'F') {
      std::size_t bytes = 0;
      head >> bytes;
      if (buffer.size() < newline + 1 + bytes) return;  // wait for the rest
      if (std::optional<FindingRecord> r = decodeRecord(std::string_view(buffer).substr(newline + 1, bytes)))
        onFinding(std::move(*r));
      buffer.erase(0, newline + 1 + bytes);
    } else {
      buffer.erase(0, newline + 1);  // unknown line: skip
    }
  }
}

}  // namespace wb::campaign
