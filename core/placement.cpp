// core/placement.cpp: placement names, the schema table of a program, the choice of
// write-backs shared by our placements, the `end` placement, and place() dispatching to every
// placement (`early` lives in placement_early.cpp, the models in placement_models.cpp).
#include "core/placement.h"

#include <array>
#include <utility>

#include "core/placement_models.h"
#include "core/rewrite.h"

namespace wb {

namespace {

struct PlacementName {
  Placement placement;
  std::string_view name;
};
constexpr std::array<PlacementName, 7> kPlacements = {{
    {Placement::Early, "early"},
    {Placement::End, "end"},
    {Placement::Upstream, "upstream"},
    {Placement::Pr20744_ff2892d4, "pr20744@ff2892d4"},
    {Placement::Pr20744_b6457f4, "pr20744@b6457f4"},
    {Placement::Pr20744_82a8901, "pr20744@82a8901"},
    {Placement::Draft13857, "draft13857"},
}};
constexpr std::string_view kLatestPr20744Alias = "pr20744";

// "output 2 (BUFFER_MUTATION target='k', value %kp)". Appended to one reserved string: the
// oracle places every program it checks, and most have an output that needs no copy.
std::string describeOutput(std::size_t index, const OutputSpec& spec) {
  const std::string_view kind = toString(spec.kind);
  std::string out;
  out.reserve(48 + kind.size() + spec.target.size() + spec.name.size());
  out += "output ";
  out += std::to_string(index);
  out += " (";
  out += kind;
  out += " target='";
  out += spec.target;
  out += "', value ";
  if (spec.name.empty()) {
    out += "a constant";
  } else {
    out += '%';
    out += spec.name;
  }
  out += ')';
  return out;
}

}  // namespace

std::string_view toString(Placement placement) {
  for (const PlacementName& p : kPlacements)
    if (p.placement == placement) return p.name;
  return "?";
}

std::optional<Placement> placementFromString(std::string_view text) {
  if (text == kLatestPr20744Alias) return kLatestPr20744;
  for (const PlacementName& p : kPlacements)
    if (p.name == text) return p.placement;
  return std::nullopt;
}

namespace {
constexpr std::pair<CopyRule, std::string_view> kCopyRules[] = {
    {CopyRule::R0, "R0"},       {CopyRule::R1, "R1"},  {CopyRule::R2, "R2"},       {CopyRule::R3, "R3"},
    {CopyRule::CopyOrder, "C"}, {CopyRule::End, "END"}, {CopyRule::Clone, "CLONE"},
};
}  // namespace

std::string_view toString(CopyRule rule) {
  for (const auto& [r, name] : kCopyRules)
    if (r == rule) return name;
  return "?";
}

std::optional<CopyRule> copyRuleFromString(std::string_view text) {
  for (const auto& [r, name] : kCopyRules)
    if (name == text) return r;
  return std::nullopt;
}

std::vector<Placement> allPlacements() {
  std::vector<Placement> all;
  for (const PlacementName& p : kPlacements) all.push_back(p.placement);
  return all;
}

std::string placementNames(std::string_view separator) {
  std::string names;
  for (const PlacementName& p : kPlacements) {
    if (!names.empty()) names += separator;
    names += p.name;
  }
  return names;
}

bool isModelOfRealCode(Placement placement) { return placement != Placement::Early && placement != Placement::End; }

bool isPr20744(Placement placement) {
  return placement == Placement::Pr20744_ff2892d4 || placement == Placement::Pr20744_b6457f4 ||
         placement == Placement::Pr20744_82a8901;
}

SchemaTable schemasFor(const Program& program, const SchemaTable& base) {
  SchemaTable table = base;
  // The reader has already reported bad lines of the program's `Schemas:` section; a line that
  // does not parse leaves its op schema-less, which the analysis treats conservatively.
  for (const std::string& line : program.schemas)
    if (Result<Schema> schema = parseSchema(line, "<program schemas>")) table.add(std::move(*schema));
  return table;
}

WriteBackSelection selectWriteBacks(const Program& program, const AliasInfo& aliases) {
  WriteBackSelection selection;
  const Graph& graph = program.graph;
  const Signature& signature = program.signature;

  // Placeholders are first and the input specs match them one to one (validate()), so input
  // spec k is node k. Keyed by (kind, name): a buffer FQN may equal a user-input name.
  // Input spec k is the id of both indices; the first spec with a key wins.
  const std::vector<InputSpec>& inputs = signature.inputs;
  auto targetOf = [&](std::uint32_t k) { return std::string_view(inputs[k].target); };
  auto nameOf = [&](std::uint32_t k) { return std::string_view(inputs[k].name); };
  FlatNameIndex<decltype(targetOf)> bufferByTarget(targetOf, inputs.size());
  FlatNameIndex<decltype(nameOf)> userInputByName(nameOf, inputs.size());
  for (std::size_t k = 0; k < inputs.size() && k < graph.nodes.size(); ++k) {
    if (inputs[k].kind == InputKind::Buffer) bufferByTarget.insert(static_cast<std::uint32_t>(k));
    if (inputs[k].kind == InputKind::UserInput) userInputByName.insert(static_cast<std::uint32_t>(k));
  }

  const std::vector<NodeId>& returned = aliases.returned();
  for (std::size_t i = 0; i < signature.outputs.size(); ++i) {
    const OutputSpec& spec = signature.outputs[i];
    if (!isMutation(spec.kind)) continue;
    const NodeId target = spec.kind == OutputKind::BufferMutation ? bufferByTarget.find(spec.target)
                                                                   : userInputByName.find(spec.target);
    if (target == kNoNode) {  // validate() rejects this; kept as a guard
      selection.skipped.push_back(describeOutput(i, spec) + ": the target does not resolve to a placeholder");
      continue;
    }
    const NodeId value = i < returned.size() ? returned[i] : kNoNode;
    if (value == kNoNode) {
      selection.skipped.push_back(describeOutput(i, spec) + ": the value is not a node");
      continue;
    }
    // The in-place lineage: args[0] of in-place-kind schemas, back to a placeholder. Each
    // step goes to an earlier node, so the walk ends.
    NodeId walk = value;
    while (walk != kNoNode && aliases.isInplaceKind(walk)) walk = aliases.firstArg(walk);
    if (walk == target) {
      std::string why = describeOutput(i, spec);
      if (walk == value) {
        why += ": the value is the target itself";
      } else {
        why += ": an in-place lineage of its own target %";
        why += graph.nodes[walk].name;
      }
      why += ", so the buffer already holds it (no copy)";
      selection.skipped.push_back(std::move(why));
      continue;
    }
    selection.writeBacks.push_back({i, target, value});
  }
  return selection;
}

PlacedProgram placeEnd(const Program& program, const SchemaTable& schemas, const PlaceOptions& options) {
  const AliasInfo aliases = analyzeAliases(program, schemas);
  WriteBackSelection selection = selectWriteBacks(program, aliases);
  PlacedProgram placed;
  placed.skipped = std::move(selection.skipped);
  if (selection.writeBacks.empty() || aliases.outputNode() == kNoNode) {
    if (options.keepInput) placed.keptInput = true;
    else placed.program = program;
    return placed;
  }
  std::vector<CopyInsertion> requests;
  for (const WriteBack& w : selection.writeBacks) requests.push_back({w.outputIndex, aliases.outputNode()});
  RewriteResult rewritten = insertWriteBacks(program, requests, OutputOrder::KeepPositions);
  for (std::size_t r = 0; options.explain && r < requests.size(); ++r) {
    const WriteBack& w = selection.writeBacks[r];
    CopyExplanation e;
    e.copyNode = rewritten.copyNames[r];
    e.buffer = program.graph.nodes[w.buffer].name;
    e.value = program.graph.nodes[w.value].name;
    e.rule = CopyRule::End;
    e.text = "before the output, in output-spec order";
    placed.copies.push_back(std::move(e));
  }
  placed.program = std::move(rewritten.program);
  return placed;
}

PlacedProgram placeEnd(const Program& program, const SchemaTable& schemas) { return placeEnd(program, schemas, {}); }

PlacedProgram place(const Program& program, Placement placement, const SchemaTable& schemas) {
  switch (placement) {
    case Placement::Early: return placeEarly(program, schemas);
    case Placement::End: return placeEnd(program, schemas);
    case Placement::Upstream: return placeUpstream(program, schemas);
    case Placement::Pr20744_ff2892d4: return placePr20744(program, Pr20744Version::Ff2892d4, schemas);
    case Placement::Pr20744_b6457f4: return placePr20744(program, Pr20744Version::B6457f4, schemas);
    case Placement::Pr20744_82a8901: return placePr20744(program, Pr20744Version::At82a8901, schemas);
    case Placement::Draft13857: return placeDraft13857(program, schemas);
  }
  return placeEarly(program, schemas);
}

PlacedProgram place(const Program& program, Placement placement, const SchemaTable& schemas,
                    const PlaceOptions& options) {
  switch (placement) {
    case Placement::Early: return placeEarly(program, schemas, options);
    case Placement::End: return placeEnd(program, schemas, options);
    default: return place(program, placement, schemas);
  }
}

PlacedProgram place(Program&& program, Placement placement, const SchemaTable& schemas) {
  if (placement == Placement::Early) return placeEarly(std::move(program), schemas);
  return place(static_cast<const Program&>(program), placement, schemas);
}

}  // namespace wb
