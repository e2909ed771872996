// campaign/campaign.cpp: one fuzzing case, finding classification, shrinking, artifacts and the
// finding table (see campaign/campaign.h).
#include "campaign/campaign.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <set>
#include <span>
#include <sstream>
#include <tuple>

#include "core/alias.h"
#include "core/text.h"
#include "gen/reduce.h"

namespace wb::campaign {

namespace {

struct HazardInfo {
  HazardClass hazard;
  std::string_view label;
  std::string_view id;
};

constexpr HazardInfo kHazards[] = {
    {HazardClass::H4ListArgument, "H4 list-argument write", "h4_list_argument"},
    {HazardClass::H5ViewCopy, "H5 view_copy becomes a view", "h5_view_copy"},
    {HazardClass::H6ShareAlloc, "H6 share_alloc", "h6_share_alloc"},
    {HazardClass::H7NoPlaceholders, "H7 no placeholders", "h7_no_placeholders"},
    {HazardClass::H10AncestorSibling, "H10 ancestor/sibling alias", "h10_ancestor_sibling"},
    {HazardClass::B1OtherLineage, "B1 lineage of another target", "b1_other_lineage"},
    {HazardClass::B2OutputOrder, "B2 copies-first output order", "b2_output_order"},
    {HazardClass::B3H8CopyOrder, "B3/H8 sequential copy order", "b3h8_copy_order"},
    {HazardClass::AliasThroughView, "alias through view", "alias_view"},
    {HazardClass::AliasThroughInplace, "alias through in-place result", "alias_inplace"},
    {HazardClass::DceStorageWriter, "DCE drops a storage writer", "dce_storage_writer"},
    {HazardClass::PassCrash, "pass command crashed", "pass_crash"},
    {HazardClass::PassHang, "pass command hung", "pass_hang"},
    {HazardClass::PassMalformed, "pass output malformed", "pass_malformed"},
    {HazardClass::PlacementFailed, "placement failed (other)", "failed"},
    {HazardClass::Unclassified, "unclassified", "unclassified"},
};

const HazardInfo& info(HazardClass hazard) {
  for (const HazardInfo& h : kHazards)
    if (h.hazard == hazard) return h;
  return kHazards[std::size(kHazards) - 1];
}

// What an observation of the oracle denotes, stable under the reducer's renaming: buffers by
// FQN; user inputs and user outputs as a kind only (their names and positions change when the
// reducer renames nodes or drops outputs).
std::string targetOf(const Program& program, const oracle::Difference& d) {
  if (d.isOutput) return "user output";
  const InputSpec* in = program.signature.inputForPlaceholder(d.label);
  if (!in) return "placeholder " + d.label;
  switch (in->kind) {
    case InputKind::Buffer: return "buffer " + in->target;
    case InputKind::Parameter: return "parameter " + in->target;
    case InputKind::UserInput: return "user input";
    default: return std::string(toString(in->kind)) + " " + in->target;
  }
}

bool hasPlaceholders(const Program& program) {
  return std::any_of(program.graph.nodes.begin(), program.graph.nodes.end(),
                     [](const Node& n) { return n.isPlaceholder(); });
}

bool isCall(const Node& n) { return n.op == NodeOp::CallFunction; }

// Some node writes through a `Tensor(a!)[]` list argument.
bool hasListWrite(const Program& program, const SchemaTable& schemas) {
  for (const Node& n : program.graph.nodes) {
    if (!isCall(n)) continue;
    const Schema* schema = schemas.find(n.target, n.args.size());
    if (!schema) continue;
    for (std::size_t i = 0; i < n.args.size() && i < schema->arguments.size(); ++i) {
      const SchemaType& type = schema->arguments[i].type;
      if (type.isTensorList() && type.isWrite() && n.args[i].isSequence()) return true;
    }
  }
  return false;
}

bool hasShareAlloc(const Program& program) {
  return std::any_of(program.graph.nodes.begin(), program.graph.nodes.end(),
                     [](const Node& n) { return n.meta.count("_share_alloc_with_arg_idx") > 0; });
}

bool hasCopyView(const Program& program) {
  return std::any_of(program.graph.nodes.begin(), program.graph.nodes.end(),
                     [](const Node& n) { return isCall(n) && isCopyViewVariant(n.target); });
}

// The placement skipped a write-back that a correct placement performs: no copy_ into that
// write-back's target was inserted (upstream's `_inplace_lineage` accepts a lineage of any
// buffer or user input, and the models inherit it).
bool skipsAWriteBack(const Program& program, const PlacedProgram& placed, const SchemaTable& schemas) {
  if (placed.failure) return false;
  const AliasInfo aliases = analyzeAliases(program, schemas);
  const WriteBackSelection selection = selectWriteBacks(program, aliases);
  const Graph& after = placed.program.graph;
  for (const WriteBack& wb : selection.writeBacks) {
    const std::string& buffer = program.graph.nodes[wb.buffer].name;
    const bool copied = std::any_of(after.nodes.begin(), after.nodes.end(), [&](const Node& n) {
      return isCall(n) && n.target.rfind("aten::copy_", 0) == 0 && !n.args.empty() && n.args[0].isRef() &&
             after.nodes[n.args[0].node].name == buffer && !program.graph.find(n.name);
    });
    if (!copied) return true;
  }
  return false;
}

// Upstream's copies-first tuple (which every model of real code keeps) moved a returned value:
// position i no longer returns the original value or the copy_ that replaced it (B2).
bool outputsReordered(const Program& program, const PlacedProgram& placed) {
  if (placed.failure) return false;
  const std::vector<Arg> before = program.graph.returnedValues();
  const std::vector<Arg> after = placed.program.graph.returnedValues();
  if (before.size() != after.size()) return true;
  const Graph& g = placed.program.graph;
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (sameArgText(after[i], g, before[i], program.graph)) continue;
    const Node* copy = after[i].isRef() ? &g.nodes[after[i].node] : nullptr;
    const bool replacedByItsCopy = copy && copy->target.rfind("aten::copy_", 0) == 0 && copy->args.size() >= 2 &&
                                   sameArgText(copy->args[1], g, before[i], program.graph);
    if (!replacedByItsCopy) return true;
  }
  return false;
}

// For every node, whether it depends (through arguments) on node `from`.
std::vector<bool> descendantsOf(const Program& program, NodeId from) {
  const Graph& g = program.graph;
  std::vector<bool> reached(g.nodes.size(), false);
  reached[from] = true;
  for (std::size_t i = from + 1; i < g.nodes.size(); ++i) {
    bool uses = false;
    auto visit = [&](NodeId k) {
      if (k < reached.size() && reached[k]) uses = true;
    };
    for (const Arg& a : g.nodes[i].args) forEachRef(a, visit);
    for (const auto& kv : g.nodes[i].kwargs) forEachRef(kv.second, visit);
    reached[i] = uses;
  }
  return reached;
}

// The class of an external pass's outcome other than Placed.
HazardClass outcomeHazard(passcmd::PassOutcome outcome) {
  switch (outcome) {
    case passcmd::PassOutcome::Crashed: return HazardClass::PassCrash;
    case passcmd::PassOutcome::Hung: return HazardClass::PassHang;
    default: return HazardClass::PassMalformed;
  }
}

bool isViewLike(const Program& program, NodeId via, const AliasInfo& aliases) {
  const Node& n = program.graph.nodes[via];
  if (n.target == "operator.getitem" || isCopyViewVariant(n.target)) return true;
  return !aliases.isInplaceKind(via);
}

}  // namespace

std::string_view hazardLabel(HazardClass hazard) { return info(hazard).label; }
std::string_view hazardId(HazardClass hazard) { return info(hazard).id; }

std::optional<HazardClass> hazardFromId(std::string_view id) {
  for (const HazardInfo& h : kHazards)
    if (h.id == id) return h.hazard;
  return std::nullopt;
}

std::vector<HazardClass> allHazardClasses() {
  std::vector<HazardClass> all;
  for (const HazardInfo& h : kHazards) all.push_back(h.hazard);
  return all;
}

std::vector<HazardClass> expectedHazards(Placement placement) {
  switch (placement) {
    case Placement::Upstream:  // §0 items 1-3 and §4.4 H8 (end order with B1 out of the way)
      return {HazardClass::B1OtherLineage, HazardClass::B2OutputOrder, HazardClass::B3H8CopyOrder};
    // §0 item 4 and §4.4, with upstream's B1 and B2 (the PR keeps its lineage check and output
    // layout) and B3/H8 (its fallback is upstream's end order); placement_models.h says which
    // version fixed what.
    case Placement::Pr20744_ff2892d4:
      return {HazardClass::B1OtherLineage, HazardClass::B2OutputOrder, HazardClass::B3H8CopyOrder,
              HazardClass::H4ListArgument,  HazardClass::H5ViewCopy,    HazardClass::H6ShareAlloc,
              HazardClass::H7NoPlaceholders, HazardClass::H10AncestorSibling};
    case Placement::Pr20744_b6457f4:
      return {HazardClass::B1OtherLineage, HazardClass::B2OutputOrder, HazardClass::B3H8CopyOrder,
              HazardClass::H5ViewCopy,     HazardClass::H6ShareAlloc,  HazardClass::H10AncestorSibling};
    case Placement::Pr20744_82a8901:
      return {HazardClass::B1OtherLineage, HazardClass::B2OutputOrder, HazardClass::B3H8CopyOrder,
              HazardClass::H5ViewCopy, HazardClass::H10AncestorSibling};
    case Placement::Draft13857:  // direct users only: every alias case (§4.4 H2, H5, H6a, H10); B2
      return {HazardClass::AliasThroughView, HazardClass::B2OutputOrder, HazardClass::H5ViewCopy,
              HazardClass::H10AncestorSibling};
    default:
      return {};
  }
}

std::string placementName(const FindingKey& key) {
  return key.passCmd.empty() ? std::string(toString(key.placement)) : std::string("pass-cmd");
}

std::string describe(const FindingKey& key) {
  std::string s = (key.passCmd.empty() ? std::string(toString(key.placement)) : key.passCmd) + ": " + key.verdict;
  if (key.viewModes != oracle::ViewModeSet::None) s += " [" + std::string(oracle::toString(key.viewModes)) + "]";
  if (!key.target.empty()) s += " on " + key.target;
  return s + ": " + std::string(hazardLabel(key.hazard));
}

// The rules (matchingHazards evaluates them all; the class is the first that applies). The order goes from what the placement's own result shows
// (it failed; it skipped a write-back; it moved outputs) to program features, most specific
// first, so that a shrunk program carrying two features is named by the one that decides:
//   0. an external pass crashed, hung or printed malformed output: that outcome's class alone;
//   1. the placement failed: H7 if the program has no placeholders, B2 if it is a model of
//      real code whose placed program is invalid (its positional spec renaming named the wrong
//      node),
//      else "placement failed";
//   2. B1: a write-back a correct placement performs got no copy_ at all;
//   3. B2: a model of real code (copies-first tuple) moved a returned value and a visible
//      output differs;
//   3b. no write-back at all: the divergence comes from the models' dead-code elimination
//      (a pure op with `_share_alloc_with_arg_idx` writes storage, DCE drops it);
//   4. H6: some node carries `_share_alloc_with_arg_idx` (nothing else creates that sharing);
//   5. H4: some node writes through a `Tensor(a!)[]` list argument;
//   6. B3/H8: one write-back's value may alias another write-back's target (in the view mode
//      of the divergence: `*_copy` views count as aliases only if it shows in alias-views
//      alone), so the order of the copies matters;
//   7. H5: a `*_copy` view exists and the divergence shows in alias-views mode only;
//   8. indirect aliases, for each write-back (B, V): a node writes a root of V through an
//      argument that does not depend on V (an ancestor or sibling): H10; else a node reads
//      or writes B, or writes V, through an alias of it: "alias through view" (views,
//      getitems, `*_copy` in alias mode) or "alias through in-place result";
//   9. otherwise "unclassified".
std::vector<HazardClass> matchingHazards(const Program& program, const oracle::CheckReport& report,
                                         const SchemaTable& schemas, const passcmd::ExternalPlacement* external,
                                         const PlacedProgram* placedWith) {
  std::vector<HazardClass> matches;
  auto match = [&](HazardClass h) {
    if (std::find(matches.begin(), matches.end(), h) == matches.end()) matches.push_back(h);
  };
  if (external && external->outcome != passcmd::PassOutcome::Placed) {
    match(outcomeHazard(external->outcome));
    return matches;
  }
  // An external pass is judged by the rules written for the models of real code: it is real
  // code, and what those rules look at (a skipped copy, a moved output) shows in any placed
  // program.
  const bool realCode = external || isModelOfRealCode(report.placement);
  if (report.placementFailure) {
    if (!hasPlaceholders(program)) match(HazardClass::H7NoPlaceholders);
    // A placed program a model of real code makes is invalid only when its positional spec
    // renaming names the wrong node (B2); the models' own failures (IndexError) are reported as
    // what they say.
    const bool invalidPlacedProgram = report.placementFailure->starts_with("the placed program is invalid");
    match(realCode && invalidPlacedProgram ? HazardClass::B2OutputOrder : HazardClass::PlacementFailed);
    return matches;
  }
  // What was checked: the external pass's placed program, placeWith's, or the placement's own.
  std::optional<PlacedProgram> ownPlacement;
  if (!external && !placedWith) ownPlacement = place(program, report.placement, schemas);
  const PlacedProgram& placed = external ? external->placed : placedWith ? *placedWith : *ownPlacement;
  const bool upstreamReorders = realCode && outputsReordered(program, placed);
  if (skipsAWriteBack(program, placed, schemas)) match(HazardClass::B1OtherLineage);
  if (upstreamReorders && std::any_of(report.bugs.begin(), report.bugs.end(),
                                      [](const oracle::Mismatch& m) { return m.difference.isOutput; }))
    match(HazardClass::B2OutputOrder);
  {
    const AliasInfo aliases = analyzeAliases(program, schemas);
    if (selectWriteBacks(program, aliases).writeBacks.empty()) {
      match(HazardClass::DceStorageWriter);
      return matches;
    }
  }
  if (hasShareAlloc(program)) match(HazardClass::H6ShareAlloc);
  if (hasListWrite(program, schemas)) match(HazardClass::H4ListArgument);

  const bool aliasOnly = oracle::bugViewModes(report) == oracle::ViewModeSet::AliasViews;
  AliasOptions aliasOptions;
  aliasOptions.copyViewsAlias = aliasOnly;
  const AliasInfo aliases = analyzeAliases(program, schemas, aliasOptions);
  const WriteBackSelection selection = selectWriteBacks(program, aliases);
  for (const WriteBack& a : selection.writeBacks)
    for (const WriteBack& b : selection.writeBacks)
      if (a.outputIndex != b.outputIndex && aliases.mayAliasRoot(b.value, a.buffer)) match(HazardClass::B3H8CopyOrder);

  if (aliasOnly && hasCopyView(program)) match(HazardClass::H5ViewCopy);

  bool ancestorOrSibling = false;
  std::optional<HazardClass> indirect;
  const NodeId output = aliases.outputNode();
  for (const WriteBack& wb : selection.writeBacks) {
    const std::vector<bool> fromValue = descendantsOf(program, wb.value);
    const auto valueRoots = aliases.rootsOf(wb.value);
    for (NodeId n = 0; n < aliases.nodeCount(); ++n) {
      if (n == output) continue;
      for (const RootAccess& w : aliases.writes(n)) {
        if (std::find(valueRoots.begin(), valueRoots.end(), w.root) == valueRoots.end()) continue;
        if (w.via == wb.value || w.via == kNoNode) continue;
        if (!fromValue[w.via]) ancestorOrSibling = true;
        else if (!indirect)
          indirect = isViewLike(program, w.via, aliases) ? HazardClass::AliasThroughView : HazardClass::AliasThroughInplace;
      }
      auto touchesBuffer = [&](std::span<const RootAccess> accesses) {
        for (const RootAccess& r : accesses)
          if (r.root == wb.buffer && r.via != wb.buffer && r.via != kNoNode && !indirect)
            indirect = isViewLike(program, r.via, aliases) ? HazardClass::AliasThroughView
                                                           : HazardClass::AliasThroughInplace;
      };
      touchesBuffer(aliases.reads(n));
      touchesBuffer(aliases.writes(n));
    }
  }
  if (ancestorOrSibling) match(HazardClass::H10AncestorSibling);
  if (indirect) match(*indirect);
  if (hasCopyView(program)) match(HazardClass::H5ViewCopy);  // both modes, no other feature
  return matches;
}

HazardClass classifyHazard(const Program& program, const oracle::CheckReport& report, const SchemaTable& schemas,
                           const passcmd::ExternalPlacement* external, const PlacedProgram* placedWith) {
  const std::vector<HazardClass> matches = matchingHazards(program, report, schemas, external, placedWith);
  return matches.empty() ? HazardClass::Unclassified : matches.front();
}

std::optional<FindingKey> classifyFinding(const Program& program, const oracle::CheckReport& report,
                                          const SchemaTable& schemas, const passcmd::ExternalPlacement* external,
                                          const PlacedProgram* placedWith) {
  if (report.verdict != oracle::Verdict::PlacementBug) return std::nullopt;
  FindingKey key;
  key.placement = report.placement;
  if (external) key.passCmd = report.placedBy;
  if (external && external->outcome != passcmd::PassOutcome::Placed) {
    key.verdict = std::string(passcmd::toString(external->outcome));
  } else if (report.placementFailure) {
    key.verdict = std::string(kPlacementFailed);
  } else {
    key.verdict = std::string(kPlacementDiverges);
    key.viewModes = oracle::bugViewModes(report);
    key.target = targetOf(program, report.bugs.front().difference);
  }
  key.hazard = classifyHazard(program, report, schemas, external, placedWith);
  return key;
}

gen::GenOptions campaignGenOptions(const CampaignOptions& options) {
  gen::GenOptions gen;
  gen.mode = options.mode;
  gen.maxNodes = options.maxNodes;
  gen.maxBuffers = 3;
  gen.maxUserInputs = 3;
  gen.maxShapeElements = 12;  // small tensors: the oracle's cost is per element
  return gen;
}

namespace {
constexpr double kSparseFamilyOdds = 0.15;  // per family, in a sparse policy
}  // namespace

gen::Policy sparsePolicy(std::uint64_t seed) {
  gen::RandomChoices choices(seed ^ 0x5a5a'c0de'f00d'1234ULL);  // a stream apart from the generator's
  auto on = [&](double odds = kSparseFamilyOdds) { return choices.flip(odds); };
  gen::Policy p;
  p.copyViews = on();
  p.realViews = on();
  p.viewsOfViews = on();
  p.inplaceOnBuffers = on();
  p.inplaceOnValues = on(0.8);
  p.listOps = on();
  p.outVariants = on();
  p.shareAlloc = on();
  p.schemaLess = on();
  p.mutableCustomOps = on();
  p.delegates = on();
  p.kvCacheOps = on();
  p.severalBuffers = on();
  p.userInputMutation = on();
  p.placeholderValues = on();
  p.dependentCopies = on();
  p.cyclicCopies = on();
  p.lineageSameTarget = on();
  p.lineageOtherTarget = on();
  p.noPlaceholders = on(0.04);
  p.outputsAliasBuffers = on();
  p.fqnCollision = on(0.1);
  p.shuffledOutputs = on();
  return p;
}

std::optional<FindingKey> PassCheck::classify(const Program& program, const SchemaTable& schemas) const {
  return classifyFinding(program, report, schemas, externalOrNull(), placedWithOrNull());
}

namespace {

// checkPass of what the external pass made of `program`, run already.
PassCheck checkExternal(oracle::Checker& checker, const Program& program, oracle::CheckOptions check,
                        passcmd::ExternalPlacement external, const std::string& placedBy, const SchemaTable& schemas) {
  PassCheck out;
  out.external = std::move(external);
  const passcmd::ExternalPlacement* placed = &*out.external;
  check.placeWith = [placed](const Program&, const SchemaTable&) { return placed->placed; };
  check.placedBy = placedBy;
  out.report = checker.check(program, check, schemas);
  return out;
}

}  // namespace

PassCheck checkPass(oracle::Checker& checker, const Program& program, oracle::CheckOptions check,
                    const passcmd::PassRunner* passCmd, const SchemaTable& schemas) {
  if (passCmd) return checkExternal(checker, program, std::move(check), passCmd->place(program), passCmd->words(), schemas);
  PassCheck out;
  if (check.placeWith) {
    check.placeWith = [&out, placeWith = std::move(check.placeWith)](const Program& p, const SchemaTable& s) {
      out.placedWith = placeWith(p, s);
      return *out.placedWith;
    };
  }
  out.report = checker.check(program, check, schemas);
  return out;
}

namespace {

// The oracle's options for a check with the campaign's options.
oracle::CheckOptions campaignCheck(Placement placement, const oracle::PlaceFunction& placeWith, int inputs,
                                   int behaviours, std::uint64_t seed) {
  oracle::CheckOptions check;
  check.placement = placement;
  check.placeWith = placeWith;
  check.inputs = inputs;
  check.behaviours = behaviours;
  check.seed = seed;
  return check;
}

// checkPass with the campaign's options.
PassCheck checkPlacement(oracle::Checker& checker, const Program& program, Placement placement,
                         const oracle::PlaceFunction& placeWith, const passcmd::PassRunner* passCmd, int inputs,
                         int behaviours, std::uint64_t seed, const SchemaTable& schemas) {
  return checkPass(checker, program, campaignCheck(placement, placeWith, inputs, behaviours, seed), passCmd, schemas);
}

// The case of `seed` before its check: the seed, the mode and the program generated.
CaseResult generateCase(std::uint64_t seed, const CampaignOptions& options, const gen::Generator& generator) {
  CaseResult result;
  result.seed = seed;
  gen::RandomChoices choices(seed);
  gen::RandomChoices share(seed ^ 0x0123'4567'89ab'cdefULL);
  gen::Generated generated;
  if (options.sparsePolicyShare > 0 && share.flip(options.sparsePolicyShare)) {
    gen::GenOptions sparse = generator.options();
    sparse.policy = sparsePolicy(seed);
    generated = gen::Generator(sparse, generator.schemas()).generate(choices);
  } else {
    generated = generator.generate(choices);
  }
  result.mode = generated.mode;
  result.program = std::move(generated.program);
  return result;
}

oracle::CheckOptions caseCheckOptions(std::uint64_t seed, const CampaignOptions& options) {
  return campaignCheck(options.placement, options.placeWith, options.inputs, options.behaviours, seed);
}

// The case's finding (and features) from its check.
void judgeCase(CaseResult& result, PassCheck checked, const SchemaTable& schemas) {
  result.finding = checked.classify(result.program, schemas);
  if (result.finding)
    result.features =
        matchingHazards(result.program, checked.report, schemas, checked.externalOrNull(), checked.placedWithOrNull());
  result.report = std::move(checked.report);
}

}  // namespace

CaseResult runCase(std::uint64_t seed, const CampaignOptions& options, const gen::Generator& generator,
                   oracle::Checker& checker) {
  CaseResult result = generateCase(seed, options, generator);
  const SchemaTable schemas = schemasFor(result.program, generator.schemas());
  judgeCase(result,
            checkPass(checker, result.program, caseCheckOptions(seed, options),
                      options.passCmd ? &*options.passCmd : nullptr, schemas),
            schemas);
  return result;
}

std::vector<CaseResult> runCases(std::span<const std::uint64_t> seeds, const CampaignOptions& options,
                                 const gen::Generator& generator, oracle::Checker& checker) {
  std::vector<CaseResult> results;
  results.reserve(seeds.size());
  if (!options.passCmd || !options.passCmd->pass().persistent) {
    for (std::uint64_t seed : seeds) results.push_back(runCase(seed, options, generator, checker));
    return results;
  }
  // The programs side by side for placeAll, and back into their cases after it (moved, not copied).
  std::vector<Program> programs;
  programs.reserve(seeds.size());
  for (std::uint64_t seed : seeds) {
    results.push_back(generateCase(seed, options, generator));
    programs.push_back(std::move(results.back().program));
  }
  std::vector<passcmd::ExternalPlacement> placed = options.passCmd->placeAll(programs);
  for (std::size_t i = 0; i < results.size(); ++i) {
    CaseResult& result = results[i];
    result.program = std::move(programs[i]);
    const SchemaTable schemas = schemasFor(result.program, generator.schemas());
    judgeCase(result,
              checkExternal(checker, result.program, caseCheckOptions(result.seed, options), std::move(placed[i]),
                            options.passCmd->words(), schemas),
              schemas);
  }
  return results;
}

CaseResult runCase(std::uint64_t seed, const CampaignOptions& options, const gen::Generator& generator) {
  oracle::Checker checker;
  return runCase(seed, options, generator, checker);
}

CaseResult runCase(std::uint64_t seed, const CampaignOptions& options) {
  return runCase(seed, options, gen::Generator(campaignGenOptions(options)));
}

std::uint64_t caseSeed(std::uint64_t runSeed, int job, std::uint64_t index) {
  std::uint64_t state = runSeed ^ (0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(job) + 1));
  const std::uint64_t stream = gen::splitmix64(state);
  std::uint64_t mixed = stream + index * 0xd1b54a32d192ed03ULL;
  return gen::splitmix64(mixed);
}

namespace {

bool parDiffersFromValue(const oracle::CheckReport& report) {
  return std::any_of(report.findings.begin(), report.findings.end(), [](const oracle::Mismatch& m) {
    return m.kind == oracle::MismatchKind::ParDiffersFromValue;
  });
}

bool earlyHolds(oracle::Checker& checker, const Program& program, std::uint64_t seed, int inputs, int behaviours,
                const SchemaTable& schemas) {
  oracle::CheckOptions check;
  check.placement = Placement::Early;
  check.inputs = inputs;
  check.behaviours = behaviours;
  check.seed = seed;
  return checker.check(program, check, schemas).verdict == oracle::Verdict::Holds;
}

// reproducesFinding with the caller's Checker (shrinking checks candidate after candidate).
// `parMustEqualValue`: the candidate must have S_par == F (see campaign.h, shrinkFinding).
bool reproducesWith(oracle::Checker& checker, const Program& program, const FindingKey& key, std::uint64_t seed,
                    int inputs, const SchemaTable& builtins, const oracle::PlaceFunction& placeWith,
                    const passcmd::PassRunner* passCmd, int behaviours, bool parMustEqualValue) {
  const SchemaTable schemas = schemasFor(program, builtins);
  const bool againstEarly = key.placement == Placement::Early && key.passCmd.empty();
  // An external pass costs a process per candidate: the correct placement's check, in
  // process, goes first (both must come out as they should).
  if (passCmd && !earlyHolds(checker, program, seed, inputs, behaviours, schemas)) return false;
  const PassCheck checked =
      checkPlacement(checker, program, key.placement, placeWith, passCmd, inputs, behaviours, seed, schemas);
  const oracle::CheckReport& report = checked.report;
  if (report.verdict != oracle::Verdict::PlacementBug) return false;
  const bool outcomeIsTheFinding = checked.external && checked.external->outcome != passcmd::PassOutcome::Placed;
  if (outcomeIsTheFinding || key.hazard == HazardClass::PassCrash || key.hazard == HazardClass::PassHang ||
      key.hazard == HazardClass::PassMalformed) {
    // A crash stays a crash, a hang a hang: the outcome is the finding.
    if (!outcomeIsTheFinding || passcmd::toString(checked.external->outcome) != key.verdict) return false;
  } else if (key.verdict == kPlacementFailed) {
    if (!report.placementFailure) return false;
  } else {
    if (report.placementFailure || report.bugs.empty()) return false;
    if (oracle::bugViewModes(report) != key.viewModes) return false;
    if (targetOf(program, report.bugs.front().difference) != key.target) return false;
  }
  // The reference must stay meaningful without leaning on the placement under test: S_par
  // agrees with the value semantics F, so the program means what its functional reading says
  // and a placement that diverges from S_par is wrong whatever any placement does.
  if (parMustEqualValue && parDiffersFromValue(report)) return false;
  // Another placement's counterexample must also be one the correct placement passes.
  if (againstEarly || passCmd) return true;  // (an external pass's: checked above)
  return earlyHolds(checker, program, seed, inputs, behaviours, schemas);
}

// Whether S_par and F agree on `program` (checked with `early`; the placement plays no part in
// the program's own findings).
bool parEqualsValueOn(oracle::Checker& checker, const Program& program, std::uint64_t seed, int inputs,
                      const SchemaTable& builtins) {
  const SchemaTable schemas = schemasFor(program, builtins);
  oracle::CheckOptions check;
  check.inputs = inputs;
  check.behaviours = 1;  // the program's findings come from draw 0 alone
  check.seed = seed;
  const oracle::CheckReport report = checker.check(program, check, schemas);
  return report.verdict != oracle::Verdict::Error && !parDiffersFromValue(report);
}

}  // namespace

bool reproducesFinding(const Program& program, const FindingKey& key, std::uint64_t seed, int inputs,
                       const SchemaTable& builtins, const oracle::PlaceFunction& placeWith,
                       const passcmd::PassRunner* passCmd, int behaviours) {
  oracle::Checker checker;
  return reproducesWith(checker, program, key, seed, inputs, builtins, placeWith, passCmd, behaviours, false);
}

ShrunkFinding shrinkFinding(const Program& program, const FindingKey& key, std::uint64_t seed, int inputs,
                            const SchemaTable& builtins, const oracle::PlaceFunction& placeWith,
                            const passcmd::PassRunner* passCmd, int behaviours) {
  ShrunkFinding out;
  out.behaviours = behaviours;
  out.program = program;
  out.key = key;
  out.bodyNodesBefore = out.bodyNodesAfter = bodyNodeCount(program);
  oracle::Checker checker;  // for every candidate of the reduction
  out.reproduced = reproducesWith(checker, program, key, seed, inputs, builtins, placeWith, passCmd, behaviours, false);
  if (!out.reproduced) return out;
  out.parEqualsValue = parEqualsValueOn(checker, program, seed, inputs, builtins);
  const gen::ReduceResult reduced = gen::reduce(program, [&](const Program& p) {
    return reproducesWith(checker, p, key, seed, inputs, builtins, placeWith, passCmd, behaviours, out.parEqualsValue);
  });
  out.program = reduced.program;
  out.tests = reduced.tests;
  out.bodyNodesAfter = bodyNodeCount(out.program);
  const SchemaTable schemas = schemasFor(out.program, builtins);
  const PassCheck checked =
      checkPlacement(checker, out.program, key.placement, placeWith, passCmd, inputs, behaviours, seed, schemas);
  if (!checked.report.bugs.empty()) out.behaviour = checked.report.bugs.front().behaviour;
  if (std::optional<FindingKey> again = checked.classify(out.program, schemas)) out.key = *again;
  return out;
}

std::string shapeOf(const Program& program) {
  std::string shape;
  for (const Node& n : program.graph.nodes) {
    if (n.isPlaceholder()) {
      const InputSpec* in = program.signature.inputForPlaceholder(n.name);
      shape += in ? std::string(toString(in->kind)) : "PLACEHOLDER";
    } else if (n.isOutput()) {
      continue;
    } else {
      shape += n.target;
    }
    shape += ",";
  }
  shape += "|";
  for (const OutputSpec& o : program.signature.outputs) shape += std::string(toString(o.kind)) + ",";
  return shape;
}

namespace {

std::uint32_t fnv1a(std::string_view text) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : text) h = (h ^ c) * 16777619u;
  return h;
}

std::string_view headerValue(std::string_view text, std::string_view field) {
  const std::string prefix = "# " + std::string(field) + ": ";
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
    if (!line.empty() && line[0] != '#') break;  // the header ends at the program
    pos = end + 1;
  }
  return {};
}

}  // namespace

std::string formatArtifact(const ShrunkFinding& finding, const ArtifactInfo& info, std::string_view fileName) {
  const FindingKey& key = finding.key;
  std::ostringstream s;
  s << "# wbcheck " << info.version << ": shrunk counterexample\n";
  const bool external = !key.passCmd.empty();
  if (external)
    s << "# pass command: " << key.passCmd << "\n";
  else
    s << "# placement: " << toString(key.placement) << "\n";
  s << "# verdict: " << key.verdict << "\n";
  if (key.viewModes != oracle::ViewModeSet::None) s << "# view modes: " << oracle::toString(key.viewModes) << "\n";
  if (!key.target.empty()) s << "# target: " << key.target << "\n";
  s << "# hazard class: " << hazardLabel(key.hazard) << "\n";
  s << "# seed: " << info.seed << "\n";
  if (!info.mode.empty()) s << "# generator mode: " << info.mode << "\n";
  const bool againstEarly = key.placement == Placement::Early && !external;
  if (!finding.reproduced && againstEarly)
    s << "# not shrunk: the finding did not reproduce (check it)\n";
  else if (!finding.reproduced)
    s << "# not shrunk: the finding did not reproduce with early holding (does early fail on it? check it)\n";
  s << "# shrunk: " << finding.bodyNodesBefore << " -> " << finding.bodyNodesAfter << " body nodes in "
    << finding.tests << " checks\n";
  s << "# behaviours: " << finding.behaviours;
  if (finding.behaviour != 0) s << " (the bug shows in behaviour draw " << finding.behaviour << ")";
  s << "\n";
  const std::string behaviours =
      finding.behaviours != oracle::kDefaultBehaviours ? " --behaviours " + std::to_string(finding.behaviours) : "";
  if (external) {
    s << "# replay: wbcheck check " << fileName << " " << key.passCmd << " --seed " << info.seed << behaviours << "\n";
    s << "# shrink again: wbcheck shrink " << fileName << " " << key.passCmd << " --seed " << info.seed << behaviours
      << "\n";
  } else {
    s << "# replay: wbcheck check " << fileName << " --placement " << toString(key.placement) << " --seed "
      << info.seed << behaviours << "\n";
  }
  if (!info.foundBy.empty()) s << "# found by: " << info.foundBy << "\n";
  if (!info.picture.empty())
    s << "# picture: " << info.picture << " (redraw: wbcheck draw " << fileName << " --svg " << info.picture << ")\n";
  if (!againstEarly)
    s << "# early holds on it (wbcheck check " << fileName << " --seed " << info.seed
      << (finding.behaviours != oracle::kDefaultBehaviours ? " --behaviours " + std::to_string(finding.behaviours) : "")
      << ").\n";
  else if (finding.reproduced && finding.parEqualsValue)
    s << "# S_par == F on it: its reference does not lean on early.\n";
  else if (finding.reproduced)
    s << "# S_par != F on it, as on the program it was shrunk from: it stands against S_par alone.\n";
  s << writeProgram(finding.program);
  return s.str();
}

ArtifactHeader parseArtifactHeader(std::string_view text) {
  ArtifactHeader h;
  h.placement = std::string(headerValue(text, "placement"));
  h.passCmd = std::string(headerValue(text, "pass command"));
  h.verdict = std::string(headerValue(text, "verdict"));
  h.viewModes = std::string(headerValue(text, "view modes"));
  h.hazard = std::string(headerValue(text, "hazard class"));
  h.target = std::string(headerValue(text, "target"));
  const std::string_view seed = headerValue(text, "seed");
  std::uint64_t value = 0;
  if (!seed.empty() && std::from_chars(seed.data(), seed.data() + seed.size(), value).ec == std::errc{}) h.seed = value;
  const std::string_view behaviours = headerValue(text, "behaviours");
  int draws = 0;
  if (!behaviours.empty() && std::from_chars(behaviours.data(), behaviours.data() + behaviours.size(), draws).ec == std::errc{})
    h.behaviours = draws;
  return h;
}

std::string artifactFileName(const FindingKey& key, std::string_view shape) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", fnv1a(shape));
  return placementName(key) + "_" + std::string(hazardId(key.hazard)) + "_" + hex + ".txt";
}

std::string pictureFileName(std::string_view artifactPath) {
  constexpr std::string_view kText = ".txt";
  if (artifactPath.size() > kText.size() && artifactPath.substr(artifactPath.size() - kText.size()) == kText)
    artifactPath.remove_suffix(kText.size());
  return std::string(artifactPath) + ".svg";
}

// ---------------------------------------------------------------------------------------------
// FindingTable.

namespace {

// Deduplication ignores the target: the same shape with another buffer name is the same bug.
auto dedupKey(const FindingRecord& r) {
  return std::tie(r.key.placement, r.key.passCmd, r.key.verdict, r.key.hazard, r.shape);
}

}  // namespace

bool FindingTable::add(FindingRecord record) {
  for (FindingRecord& existing : records_) {
    if (dedupKey(existing) == dedupKey(record)) {
      existing.count += std::max<std::size_t>(record.count, 1);
      return false;
    }
  }
  record.count = std::max<std::size_t>(record.count, 1);
  records_.push_back(std::move(record));
  return true;
}

std::map<std::string, std::size_t> FindingTable::countsByHazard() const {
  std::map<std::string, std::size_t> counts;
  for (const FindingRecord& r : records_) counts[std::string(hazardLabel(r.key.hazard))] += r.count;
  return counts;
}

bool FindingTable::hasAll(const std::vector<HazardClass>& wanted) const {
  return std::all_of(wanted.begin(), wanted.end(), [&](HazardClass h) {
    return std::any_of(records_.begin(), records_.end(), [h](const FindingRecord& r) { return r.key.hazard == h; });
  });
}

std::string FindingTable::formatSummary() const {
  struct Row {
    double first = 0;
    std::size_t smallest = 0, shapes = 0, reports = 0;
    std::uint64_t seed = 0;
    std::string modes;
  };
  std::map<std::tuple<std::string, std::string, HazardClass>, Row> rows;
  for (const FindingRecord& r : records_) {
    auto [it, fresh] = rows.try_emplace({placementName(r.key), r.key.verdict, r.key.hazard});
    Row& row = it->second;
    if (fresh || r.secondsToFind < row.first) {
      row.first = r.secondsToFind;
      row.seed = r.seed;
    }
    row.smallest = fresh ? r.bodyNodes : std::min(row.smallest, r.bodyNodes);
    row.shapes += 1;
    row.reports += r.count;
    const std::string modes(oracle::toString(r.key.viewModes));
    if (row.modes.empty()) row.modes = modes;
    else if (row.modes != modes && modes.size()) row.modes = "mixed";
  }
  std::ostringstream s;
  char line[256];
  std::snprintf(line, sizeof line, "%-16s %-18s %-12s %-32s %9s %6s %6s %7s  %s\n", "placement", "verdict", "modes",
                "hazard class", "first(s)", "nodes", "shapes", "reports", "seed");
  s << line;
  for (const auto& [k, row] : rows) {
    std::snprintf(line, sizeof line, "%-16s %-18s %-12s %-32s %9.2f %6zu %6zu %7zu  %llu\n",
                  std::get<0>(k).c_str(), std::get<1>(k).c_str(),
                  row.modes.empty() ? "-" : row.modes.c_str(), std::string(hazardLabel(std::get<2>(k))).c_str(), row.first,
                  row.smallest, row.shapes, row.reports, static_cast<unsigned long long>(row.seed));
    s << line;
  }
  return s.str();
}

// ---------------------------------------------------------------------------------------------
// Records over a pipe: "field=value" lines, then "artifact=<bytes>" and the artifact bytes.

namespace {

// A value on one line: backslashes and newlines escaped (a quoted shell command may hold both).
std::string escapeLine(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '\\' ? std::string("\\\\") : c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

std::string unescapeLine(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      out += text[i + 1] == 'n' ? '\n' : text[i + 1];
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

std::string encodeRecord(const FindingRecord& r) {
  std::ostringstream s;
  s << "placement=" << toString(r.key.placement) << "\n"
    << "pass_cmd=" << escapeLine(r.key.passCmd) << "\n"
    << "verdict=" << r.key.verdict << "\n"
    << "modes=" << oracle::toString(r.key.viewModes) << "\n"
    << "target=" << r.key.target << "\n"
    << "hazard=" << hazardId(r.key.hazard) << "\n"
    << "shape=" << r.shape << "\n"
    << "seed=" << r.seed << "\n"
    << "seconds=" << r.secondsToFind << "\n"
    << "nodes=" << r.bodyNodes << "\n"
    << "count=" << r.count << "\n"
    << "artifact=" << r.artifact.size() << "\n"
    << r.artifact;
  return s.str();
}

std::optional<FindingRecord> decodeRecord(std::string_view text) {
  FindingRecord r;
  std::map<std::string, std::string> fields;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) return std::nullopt;
    const std::string name(line.substr(0, eq));
    fields[name] = std::string(line.substr(eq + 1));
    if (name == "artifact") break;
  }
  auto number = [&](const char* name, auto& into) {
    const std::string& v = fields[name];
    return !v.empty() && std::from_chars(v.data(), v.data() + v.size(), into).ec == std::errc{};
  };
  std::optional<Placement> placement = placementFromString(fields["placement"]);
  std::optional<HazardClass> hazard = hazardFromId(fields["hazard"]);
  std::optional<oracle::ViewModeSet> modes = oracle::viewModeSetFromString(fields["modes"]);
  std::size_t artifactBytes = 0;
  if (!placement || !hazard || !modes || !number("seed", r.seed) || !number("nodes", r.bodyNodes) ||
      !number("count", r.count) || !number("artifact", artifactBytes) || text.size() - pos != artifactBytes)
    return std::nullopt;
  try {
    r.secondsToFind = std::stod(fields["seconds"]);
  } catch (...) {
    return std::nullopt;
  }
  r.key.placement = *placement;
  r.key.verdict = fields["verdict"];
  r.key.viewModes = *modes;
  r.key.target = fields["target"];
  r.key.hazard = *hazard;
  r.key.passCmd = unescapeLine(fields["pass_cmd"]);
  r.shape = fields["shape"];
  r.artifact = std::string(text.substr(pos));
  return r;
}

}  // namespace wb::campaign
