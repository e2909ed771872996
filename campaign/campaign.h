// campaign/campaign.h: the fuzzing campaign behind `wbcheck fuzz` and `wbcheck shrink` (DESIGN §1,
// §9, §10, §12; verification-anchors §4, §8). campaign/ sits above gen/ (programs, the reducer)
// and oracle/ (verdicts); gen/ knows no oracle.
//
// One case: generate a program from a seed, run the oracle with one placement, and, when the
// placement diverges from S_par (or fails), classify the divergence into a FindingKey. A
// finding is then shrunk with the graph reducer (gen/reduce.h) under the predicate "the same
// placement still shows the same kind of divergence on the same target in the same view modes,
// and the program still does not lean on the placement under test" (shrinkFinding: S_par
// == F where the input has it, and `early` holds when it is not the placement under test),
// reclassified on the shrunk program, and written as a form-1 file
// with a header that says how to replay it.
//
// The placement under test is one of wbcheck's, a function (tests' broken variants), or an
// external pass (CampaignOptions::passCmd, passcmd/): a command run on each case and on each
// candidate of a shrink. Its crashes, hangs and malformed outputs are findings of their own
// kinds, and a shrink keeps the kind.
//
// Each check tries CampaignOptions::behaviours behaviour draws of the ops without a schema
// (oracle.h: HavocBehaviour): the placement is compared with S_par in every draw, while the
// program's own findings (S_seq != S_par, S_par != F) come from draw 0 only, because F's
// functional reading cannot model the writes of an op it knows nothing about.
//
// Everything here is single-process and deterministic: the CLI adds processes, signals,
// progress lines and files. FindingTable aggregates findings (deduplication, time to first
// find, the summary table) wherever they come from. Which findings a run shrinks is
// campaign/shrink_policy.h; a worker that runs case after case, campaign/worker.h; a run's
// options, totals and summary, campaign/fuzz_run.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/placement.h"
#include "core/schema.h"
#include "gen/generator.h"
#include "oracle/oracle.h"
#include "passcmd/pass_runner.h"

namespace wb::campaign {

// ---------------------------------------------------------------------------------------------
// Hazard classes (executorch-semantics §0, §2, §4.4), decided by classifyFinding.

enum class HazardClass : std::uint8_t {
  H4ListArgument,       // a Tensor(a!)[] list argument writes the value
  H5ViewCopy,           // a *_copy view read after the copy, wrong only once it is a view
  H6ShareAlloc,         // `_share_alloc_with_arg_idx` storage sharing
  H7NoPlaceholders,     // the placement itself fails on a program without placeholders
  H10AncestorSibling,   // the value's storage written through an ancestor or a sibling
  B1OtherLineage,       // mutation value is a lineage of another target: copy skipped
  B2OutputOrder,        // upstream's copies-first output tuple with positional spec renaming
  B3H8CopyOrder,        // one copy reads storage another copy writes: sequential order wrong
  AliasThroughView,     // buffer read / value written through a view (or getitem) of it
  AliasThroughInplace,  // buffer read / value written through the result of an in-place op
  DceStorageWriter,     // no write-back at all: DCE dropped a node that writes storage
  PassCrash,            // an external pass exited non-zero or was killed by a signal
  PassHang,             // an external pass gave no answer within its time limit
  PassMalformed,        // an external pass printed no program, or one whose inputs are not the input's
  PlacementFailed,      // the placement failed for another reason (placed program invalid)
  Unclassified,         // none of the rules applies: look at it
};

std::string_view hazardLabel(HazardClass hazard);  // "H5 view_copy becomes a view"
std::string_view hazardId(HazardClass hazard);     // "h5_view_copy" (file names, --until-classes)
std::optional<HazardClass> hazardFromId(std::string_view id);
std::vector<HazardClass> allHazardClasses();

// The classes executorch-semantics attributes to each modelled algorithm (what a campaign
// against it must find); empty for `early` and `end`.
std::vector<HazardClass> expectedHazards(Placement placement);

// ---------------------------------------------------------------------------------------------
// Findings.

inline constexpr std::string_view kPlacementDiverges = oracle::toString(oracle::MismatchKind::PlacementDiffersFromPar);
inline constexpr std::string_view kPlacementFailed = "placement failed";

// What a divergence is, independently of the program that shows it.
struct FindingKey {
  Placement placement = Placement::Early;  // unused when passCmd is set
  // kPlacementDiverges, kPlacementFailed, or (an external pass that crashed, hung or printed
  // malformed output) passcmd::toString of that outcome: "crash", "hang", "malformed output".
  std::string verdict;
  oracle::ViewModeSet viewModes = oracle::ViewModeSet::None;  // None when the placement failed
  std::string target;        // what differs first: "buffer s", "user input", "user output", ...
  HazardClass hazard = HazardClass::Unclassified;
  // An external pass: the command-line words that select it (passcmd::commandLineWords,
  // "--pass-cmd 'python3 end.py'"); empty for a placement of wbcheck's.
  std::string passCmd;
  friend auto operator<=>(const FindingKey&, const FindingKey&) = default;
};

// "pr20744: placement != S_par [alias-views] on buffer s: H5 view_copy becomes a view";
// "--pass-cmd 'python3 end.py': crash: pass command crashed".
std::string describe(const FindingKey& key);

// The placement column of a summary and the first word of an artifact's file name: the
// placement's name, or "pass-cmd".
std::string placementName(const FindingKey& key);

// The key of a placement bug in `report` (a check of `program` with key.placement), or
// nullopt when the report holds. The hazard class comes from the program's features, by the
// first rule that applies (see campaign.cpp, classifyHazard, for the rules and why that order).
//
// `external`: the report is a check of what an external pass made of `program` (its placed
// program, or the crash, hang or malformed output that is the finding; report.placedBy names
// the pass). The rules that look at the placed program look at that one, and those written for
// the models of real code (B1, B2) apply to it.
//
// `placedWith`: the report is a check of what CheckOptions::placeWith made of `program` (a
// placement that is not one of Placement's): the rules that look at the placed program look at
// that one, not at what report.placement would make.
std::optional<FindingKey> classifyFinding(const Program& program, const oracle::CheckReport& report,
                                          const SchemaTable& schemas,
                                          const passcmd::ExternalPlacement* external = nullptr,
                                          const PlacedProgram* placedWith = nullptr);

// The rules alone, for a program on which `placement` shows `report`'s divergence: the first
// class of matchingHazards(), or Unclassified.
HazardClass classifyHazard(const Program& program, const oracle::CheckReport& report, const SchemaTable& schemas,
                           const passcmd::ExternalPlacement* external = nullptr,
                           const PlacedProgram* placedWith = nullptr);
// Every rule that applies, in rule order. On an unshrunk program several usually do; the
// campaign uses them to decide which findings are worth shrinking (one that may still shrink
// to a class not found yet).
std::vector<HazardClass> matchingHazards(const Program& program, const oracle::CheckReport& report,
                                         const SchemaTable& schemas,
                                         const passcmd::ExternalPlacement* external = nullptr,
                                         const PlacedProgram* placedWith = nullptr);

// A check of `program` by the pass under test, and what it placed: the one place where an
// external pass is run for a check (check, fuzz and shrink all come here). With `passCmd`, the
// command runs once on `program` and the oracle checks its placed program (check.placeWith and
// check.placedBy are set to it); without, `check` runs as given, and a check.placeWith's placed
// program is kept. Either way the classification rules then look at what was checked.
struct PassCheck {
  oracle::CheckReport report;
  std::optional<passcmd::ExternalPlacement> external;  // the command's outcome (passCmd given)
  std::optional<PlacedProgram> placedWith;             // check.placeWith's (no passCmd)
  const passcmd::ExternalPlacement* externalOrNull() const { return external ? &*external : nullptr; }
  const PlacedProgram* placedWithOrNull() const { return placedWith ? &*placedWith : nullptr; }
  // classifyFinding of the report, on what was checked.
  std::optional<FindingKey> classify(const Program& program, const SchemaTable& schemas) const;
};
PassCheck checkPass(oracle::Checker& checker, const Program& program, oracle::CheckOptions check,
                    const passcmd::PassRunner* passCmd, const SchemaTable& schemas);

// ---------------------------------------------------------------------------------------------
// One case.

struct CampaignOptions {
  Placement placement = Placement::Early;
  oracle::PlaceFunction placeWith;  // set: places instead of `placement` (tests' broken variants)
  // Set: the pass under test is this external command (placement and placeWith unused); it
  // runs on every case and on every candidate of a shrink.
  std::optional<passcmd::PassRunner> passCmd;
  std::optional<gen::GenMode> mode;  // nullopt: drawn per case
  int maxNodes = 10;            // body nodes per generated program
  int inputs = 3;               // oracle input sets (as `wbcheck check`'s default, so the
                                // replay line reproduces it)
  // Share of cases generated with a sparse policy drawn by the campaign (each family on with
  // probability 0.15, in-place ops on values 0.8) instead of the generator's own dense swarm: fewer families
  // per program make rare combinations of one family (H10: an in-place write to an ancestor
  // of a mutation value) several times likelier (Csmith's swarm testing, taken further).
  double sparsePolicyShare = 0.5;
  // Behaviour draws of the ops without a schema per check (oracle::CheckOptions::behaviours).
  int behaviours = oracle::kDefaultBehaviours;
};

// The sparse policy of a case: deterministic in the case seed.
gen::Policy sparsePolicy(std::uint64_t seed);

// The generator options a campaign uses for `options`.
gen::GenOptions campaignGenOptions(const CampaignOptions& options);

struct CaseResult {
  std::uint64_t seed = 0;         // generator seed, also the oracle's input seed
  gen::GenMode mode = gen::GenMode::Realistic;
  Program program;                // as generated
  oracle::CheckReport report;
  std::optional<FindingKey> finding;  // set iff the placement diverged or failed
  std::vector<HazardClass> features;  // matchingHazards() when there is a finding
};

// Generates the program of `seed` and checks it with options.placement. `generator` must have
// been built with campaignGenOptions(options); the overloads without it build one. A worker
// that runs case after case passes its own `checker` (what one check leaves for the next);
// the result is the same with a fresh one.
CaseResult runCase(std::uint64_t seed, const CampaignOptions& options, const gen::Generator& generator,
                   oracle::Checker& checker);
CaseResult runCase(std::uint64_t seed, const CampaignOptions& options, const gen::Generator& generator);
CaseResult runCase(std::uint64_t seed, const CampaignOptions& options);
// runCase of each seed, in order, with the same results. A persistent external pass gets the
// programs all at once (PassRunner::placeAll): pipelined, they cost it one wake-up, not one each.
std::vector<CaseResult> runCases(std::span<const std::uint64_t> seeds, const CampaignOptions& options,
                                 const gen::Generator& generator, oracle::Checker& checker);

// The seed of case `index` of job `job` in a run started with `runSeed`: independent streams.
std::uint64_t caseSeed(std::uint64_t runSeed, int job, std::uint64_t index);

// ---------------------------------------------------------------------------------------------
// Shrinking.

// True when checking `program` with key.placement (oracle seed `seed`; placed with `placeWith`
// when set, see oracle::CheckOptions, or by running `passCmd` when given) gives the same kind
// of divergence in exactly the same view modes on the same target (for an external pass: the
// same outcome, a crash stays a crash) and, for a placement other than `early`, `early` holds on
// it (the correct placement passes it). `builtins` is the base schema table (builtinSchemas();
// parsed once by the caller).
bool reproducesFinding(const Program& program, const FindingKey& key, std::uint64_t seed, int inputs,
                       const SchemaTable& builtins, const oracle::PlaceFunction& placeWith = {},
                       const passcmd::PassRunner* passCmd = nullptr, int behaviours = oracle::kDefaultBehaviours);

struct ShrunkFinding {
  Program program;              // reduced (or the input, if it did not reproduce)
  FindingKey key;               // reclassified on the reduced program
  bool reproduced = false;      // the input itself reproduced the key
  bool parEqualsValue = false;  // S_par == F on the input, hence kept on the result
  std::size_t bodyNodesBefore = 0, bodyNodesAfter = 0;
  std::size_t tests = 0;        // predicate calls
  int behaviours = oracle::kDefaultBehaviours;  // behaviour draws per check (the replay's)
  unsigned behaviour = 0;       // the draw the reduced program's first bug shows in
};

// Reduces `program` (gen::reduce) keeping reproducesFinding(·, key, seed, inputs, builtins,
// placeWith) and, where the input has it, S_par == F (no S_par != F finding).
//
// Shrinking a finding against `early`, the pass being changed, cannot lean on `early` holding.
// What keeps the candidates meaningful instead:
// - every candidate is valid (the reducer's validate()) and within reinplace's domain (an
//   annotation outside it leaves the placement unjudged, so nothing reproduces there);
// - on every such program S_par is what the pass must produce (DESIGN §7) and a placement can
//   produce it (clone each value written back at the end, then copy each), so a placement that
//   diverges from S_par is wrong there: a shrunk finding is a bug of the placement, though
//   possibly another one than the input's (it is reclassified);
// - where the input has S_par == F (about half of the findings of generated programs, and most
//   real ones), every candidate keeps it: the program still means what its functional reading
//   says, and S_par is the right reference on it independently of any placement.
// The same predicate serves every placement; for the others `early` holds too.
ShrunkFinding shrinkFinding(const Program& program, const FindingKey& key, std::uint64_t seed, int inputs,
                            const SchemaTable& builtins, const oracle::PlaceFunction& placeWith = {},
                            const passcmd::PassRunner* passCmd = nullptr,
                            int behaviours = oracle::kDefaultBehaviours);

// The shape used to deduplicate findings: op targets in graph order and output spec kinds.
std::string shapeOf(const Program& program);

// Provenance of an artifact.
struct ArtifactInfo {
  std::string version;        // wbcheck version
  std::uint64_t seed = 0;     // case seed (= oracle input seed)
  std::string foundBy;        // the command line that found it ("" for shrink)
  std::string mode;           // generator mode, if generated
  std::string picture;        // the finding's picture (pictureFileName of the artifact's path);
                              // "" when none is drawn
};

// The form-1 text of a shrunk finding with its header comment: placement, verdict, hazard
// class, target, seed, behaviour draws (and the draw the bug shows in), the replay command
// (`wbcheck check FILE --placement P --seed S`, with `--behaviours N` if not the default) and
// the command that found it, and its picture when info.picture names one. `fileName` is what the
// replay line calls the file. An external pass's artifact names it by `# pass command:` instead
// of `# placement:`, and its replay lines run it (`wbcheck check FILE --pass-cmd 'CMD' --seed S`,
// and `wbcheck shrink FILE --pass-cmd 'CMD' --seed S`).
std::string formatArtifact(const ShrunkFinding& finding, const ArtifactInfo& info, std::string_view fileName);

// The header fields formatArtifact writes, read back (for replay tests and `wbcheck shrink`
// of an artifact). Missing fields stay empty.
struct ArtifactHeader {
  std::string placement;
  std::string passCmd;  // `# pass command:` (command-line words)
  std::string verdict;
  std::string viewModes;
  std::string hazard;   // label
  std::string target;
  std::optional<std::uint64_t> seed;
  std::optional<int> behaviours;  // `# behaviours: N` (files written before it have none)
};
ArtifactHeader parseArtifactHeader(std::string_view text);

// A file name for a finding: "<placementName>_<hazard id>_<8 hex digits of the shape>.txt".
std::string artifactFileName(const FindingKey& key, std::string_view shape);

// The picture beside an artifact: "dir/NAME.txt" -> "dir/NAME.svg" (a path not ending in .txt
// gets ".svg" appended).
std::string pictureFileName(std::string_view artifactPath);

// ---------------------------------------------------------------------------------------------
// Aggregation.

struct FindingRecord {
  FindingKey key;
  std::string shape;
  std::uint64_t seed = 0;
  double secondsToFind = 0.0;   // since the start of the run, when first reported
  std::size_t bodyNodes = 0;    // shrunk size
  std::size_t count = 0;        // reports with this key and shape
  std::string artifact;         // formatted text (written by the CLI)
};

// Findings deduplicated by (placement, verdict, hazard class, shrunk shape); per hazard class,
// the first time and the smallest program.
class FindingTable {
 public:
  // Records a finding; true if its (key without target, shape) was new.
  bool add(FindingRecord record);
  const std::vector<FindingRecord>& records() const { return records_; }
  bool empty() const { return records_.empty(); }
  // Findings per hazard label, for progress lines: "H5 view_copy becomes a view: 3".
  std::map<std::string, std::size_t> countsByHazard() const;
  // Every class in `wanted` has been found (for --until-classes).
  bool hasAll(const std::vector<HazardClass>& wanted) const;
  // One line per (placement, verdict, hazard class): time to first find, shrunk size (the
  // smallest), distinct shapes, reports, seed of the first.
  std::string formatSummary() const;

 private:
  std::vector<FindingRecord> records_;
};

// Encodes a record for a pipe between processes, and decodes it (nullopt if malformed).
std::string encodeRecord(const FindingRecord& record);
std::optional<FindingRecord> decodeRecord(std::string_view text);

}  // namespace wb::campaign
