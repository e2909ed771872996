// draw/draw.cpp: the picture of a placed program in graphviz DOT (see draw/draw.h).
#include "draw/draw.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <span>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "core/alias.h"
#include "core/text.h"
#include "core/xml.h"
#include "oracle/oracle.h"

namespace wb::draw {

namespace {

// Storage colours: a light fill for the nodes that may share the root and a dark line for its
// writes. No red: red means wrong.
struct Colour {
  std::string_view fill;
  std::string_view line;
};
constexpr std::array<Colour, 8> kPalette{{
    {"#cfe0f3", "#2f6ea8"},  // blue
    {"#d5ecc8", "#3f8a34"},  // green
    {"#fde0b8", "#c46f0a"},  // orange
    {"#e3d7f2", "#6a4ea0"},  // purple
    {"#f7edb0", "#8f7400"},  // yellow
    {"#cdeaea", "#2f7f7f"},  // teal
    {"#ead8c8", "#8a5a3c"},  // brown
    {"#e2e2e2", "#555555"},  // grey
}};
constexpr std::string_view kRed = "#d62728";
constexpr std::string_view kRedFill = "#fbd5d5";
constexpr std::string_view kWhy = "#4a6fa5";  // what binds a copy (dotted)
constexpr std::string_view kEdge = "#9a9a9a";
constexpr std::string_view kFaint = "#777777";
constexpr std::size_t kMaxLine = 64;  // characters of a label line before it is clipped or wrapped

std::string clip(std::string text, std::size_t width = kMaxLine) {
  if (text.size() <= width) return text;
  text.resize(width - 3);
  return text + "...";
}

// Breaks `text` into lines of at most `width` characters at spaces (a longer word stays whole).
std::vector<std::string> wrap(std::string_view text, std::size_t width = kMaxLine) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream words{std::string(text)};
  for (std::string word; words >> word;) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// "aten::view_copy" -> "view_copy", "aten::add.Tensor" -> "add.Tensor"; other namespaces stay.
std::string shortTarget(std::string_view target) {
  if (target.rfind("aten::", 0) == 0) target.remove_prefix(6);
  return std::string(target);
}

std::string font(std::string_view colour, std::string_view text, int size = 0) {
  std::string out = "<FONT COLOR=\"" + std::string(colour) + "\"";
  if (size > 0) out += " POINT-SIZE=\"" + std::to_string(size) + "\"";
  return out + ">" + std::string(text) + "</FONT>";
}

constexpr std::string_view kLeft = "<BR ALIGN=\"LEFT\"/>";

std::string modes(oracle::ViewModeSet set) {
  return set == oracle::ViewModeSet::Both ? "both view modes" : std::string(oracle::toString(set));
}

// Which roots get a colour, and which.
struct Storage {
  std::vector<int> colour;      // per node (as a root): index into kPalette, or -1
  std::vector<RootId> coloured;  // the coloured roots, in graph order
};

Storage colourRoots(const Program& program, const AliasInfo& aliases, const std::vector<CopyExplanation>& copies) {
  const Graph& graph = program.graph;
  const std::size_t n = graph.nodes.size();
  std::vector<std::size_t> sharers(n, 0);
  std::vector<bool> wanted(n, false);
  for (NodeId v = 0; v < n; ++v) {
    for (RootId r : aliases.rootsOf(v)) ++sharers[r];
    for (const RootAccess& w : aliases.writes(v))
      if (w.root != v) wanted[w.root] = true;
  }
  for (const OutputSpec& spec : program.signature.outputs)
    if (const InputSpec* target = isMutation(spec.kind) ? program.signature.mutatedInput(spec) : nullptr)
      if (const std::optional<std::size_t> at = graph.indexOf(target->name)) wanted[*at] = true;
  for (const CopyExplanation& c : copies)
    if (const std::optional<std::size_t> at = graph.indexOf(c.buffer)) wanted[*at] = true;
  Storage s;
  s.colour.assign(n, -1);
  for (NodeId r = 0; r < n; ++r) {
    if (!wanted[r] && sharers[r] < 2) continue;
    if (aliases.rootsOf(r).empty() && !graph.nodes[r].isPlaceholder()) continue;
    s.colour[r] = static_cast<int>(s.coloured.size() % kPalette.size());
    s.coloured.push_back(r);
  }
  return s;
}

class DotWriter {
 public:
  DotWriter(const Program& drawn, const Program& input, const SchemaTable& schemas,
            const std::vector<CopyExplanation>& copies, const Refutation& refutation)
      : program_(drawn),
        input_(input),
        graph_(drawn.graph),
        aliases_(analyzeAliases(drawn, schemas)),
        copies_(copies),
        ref_(refutation),
        storage_(colourRoots(drawn, aliases_, copies)) {
    for (const CopyExplanation& c : copies_) copyOf_[c.copyNode] = &c;
    for (const std::string& c : ref_.offendingCopies) offending_.insert(c);
    for (const BrokenDependence& b : ref_.broken) brokenInto_[b.offending].push_back(&b);
    for (const Divergence& d : ref_.divergences) {
      if (!d.firstDivergingNode.empty()) firstDiverging_[d.firstDivergingNode].push_back(&d);
      if (!d.isOutput) divergingPlaceholder_[d.placeholder].push_back(&d);
      if (d.position) divergingOutput_[*d.position].push_back(&d);
    }
    for (const MissingWriteBack& m : ref_.missing) {
      missingInto_[m.buffer].push_back(&m);
      if (m.outputPosition) missingAt_[*m.outputPosition].push_back(&m);
    }
    for (const ChangedOutput& c : ref_.changedOutputs) changedOutput_[c.position].push_back(&c);
    // Nodes of the input the drawn program lacks, each after the last input node before it that
    // the drawn program has ("" when none: at the start of the body).
    std::string after;
    for (NodeId v = 0; v < input_.graph.nodes.size(); ++v) {
      const Node& node = input_.graph.nodes[v];
      if (node.isPlaceholder() || node.isOutput()) continue;
      if (graph_.indexOf(node.name)) {
        after = node.name;
      } else {
        removedAfter_[after].push_back(v);
      }
    }
  }

  std::string write(const std::string& title, const std::vector<std::string>& caption) {
    out_ << "digraph wbcheck {\n";
    out_ << "  graph [rankdir=TB, newrank=true, nodesep=0.35, ranksep=0.3, fontname=\"Helvetica\", labelloc=t, "
            "labeljust=l];\n";
    out_ << "  node [fontname=\"Helvetica\", fontsize=11, shape=box, style=\"rounded,filled\", fillcolor=\"white\", "
            "color=\"#555555\", margin=\"0.12,0.06\"];\n";
    out_ << "  edge [fontname=\"Helvetica\", fontsize=9, color=\"" << kEdge << "\", arrowsize=0.7];\n";
    out_ << "  label=<" << captionLabel(title, caption) << ">;\n";
    writeNodes();
    writeEdges();
    out_ << "}\n";
    return out_.str();
  }

 private:
  std::string id(NodeId v) const { return "n" + std::to_string(v); }
  const std::string& rootName(RootId r) const { return graph_.nodes[r].name; }

  std::string captionLabel(const std::string& title, const std::vector<std::string>& caption) const {
    std::string t = "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"2\" CELLPADDING=\"1\">";
    auto row = [&](const std::string& cell) { t += "<TR><TD ALIGN=\"LEFT\">" + cell + "</TD></TR>"; };
    if (!title.empty()) row("<B>" + escapeXml(title) + "</B>");
    for (std::size_t i = 0; i < caption.size(); ++i) {
      const bool verdict = i == 0;
      const std::string_view colour = verdict && ref_.refuted() ? kRed : verdict ? "#2e7d32" : kFaint;
      row(font(colour, verdict ? "<B>" + escapeXml(caption[i]) + "</B>" : escapeXml(caption[i])));
    }
    if (ref_.placementFailure && (caption.empty() || caption.front().find(*ref_.placementFailure) == std::string::npos))
      row(font(kRed, escapeXml("the placement fails: " + *ref_.placementFailure)));
    for (const Divergence& d : ref_.divergences) row(font(kRed, escapeXml(d.text)));
    if (!storage_.coloured.empty()) {
      std::string legend = "<TABLE ALIGN=\"LEFT\" BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"3\" CELLPADDING=\"2\"><TR><TD BORDER=\"0\">" +
                           font(kFaint, "storage:") + "</TD>";
      for (RootId r : storage_.coloured) {
        const Colour& c = kPalette[static_cast<std::size_t>(storage_.colour[r])];
        legend += "<TD BGCOLOR=\"" + std::string(c.fill) + "\" COLOR=\"" + std::string(c.line) + "\">" +
                  escapeXml(rootLegend(r)) + "</TD>";
      }
      row(legend + "</TR></TABLE>");
    }
    row(font(kFaint, "same colour: same storage (a thick edge writes it); double border: a write-back copy_"));
    row(font(kFaint, "dotted: what a copy must follow" +
                         std::string(ref_.refuted() ? "; red: what the placement gets wrong" : "")));
    return t + "</TABLE>";
  }

  std::string rootLegend(RootId r) const {
    const Node& node = graph_.nodes[r];
    if (node.isPlaceholder()) {
      const InputSpec* in = program_.signature.inputForPlaceholder(node.name);
      if (!in) return node.name;
      std::string kind(toString(in->kind));
      return node.name + " (" + kind + (in->target.empty() ? "" : " '" + in->target + "'") + ")";
    }
    return "%" + node.name;
  }

  // The fill of a value: the colours of the roots it may share.
  std::string fillOf(NodeId v, bool& striped) const {
    std::vector<std::string_view> fills;
    for (RootId r : aliases_.rootsOf(v))
      if (storage_.colour[r] >= 0) fills.push_back(kPalette[static_cast<std::size_t>(storage_.colour[r])].fill);
    if (graph_.nodes[v].isPlaceholder() && storage_.colour[v] >= 0 && fills.empty())
      fills.push_back(kPalette[static_cast<std::size_t>(storage_.colour[v])].fill);
    striped = fills.size() > 1;
    if (fills.empty()) return "white";
    std::string out;
    for (std::string_view f : fills) out += (out.empty() ? "" : ":") + std::string(f);
    return out;
  }

  std::string_view lineOf(RootId r) const {
    return storage_.colour[r] >= 0 ? kPalette[static_cast<std::size_t>(storage_.colour[r])].line : "#555555";
  }

  std::string callText(const Node& node) const {
    std::string args;
    for (const Arg& a : node.args) args += (args.empty() ? "" : ", ") + formatArg(a, graph_);
    for (const auto& [key, value] : node.kwargs) args += (args.empty() ? "" : ", ") + key + "=" + formatArg(value, graph_);
    return clip(shortTarget(node.target) + "(" + args + ")");
  }

  std::string rootList(const std::vector<RootId>& roots) const {
    std::string out;
    for (RootId r : roots) out += (out.empty() ? "" : ", ") + rootName(r);
    return out;
  }

  void writeNodes() {
    std::vector<std::string> placeholders;
    std::vector<std::string> rows;  // body nodes and ghosts, in the order they are drawn
    std::map<std::string, std::vector<std::size_t>> ghostsAfter;
    for (std::size_t i = 0; i < ref_.missing.size(); ++i) ghostsAfter[ref_.missing[i].after].push_back(i);
    auto ghosts = [&](const std::string& after) {
      if (const auto it = removedAfter_.find(after); it != removedAfter_.end()) {
        for (NodeId v : it->second) {
          writeRemoved(v);
          rows.push_back("removed" + std::to_string(v));
        }
      }
      const auto it = ghostsAfter.find(after);
      if (it == ghostsAfter.end()) return;
      for (std::size_t i : it->second) {
        writeGhost(i);
        rows.push_back("missing" + std::to_string(i));
      }
    };
    bool bodyStarted = false;
    for (NodeId v = 0; v < graph_.nodes.size(); ++v) {
      const Node& node = graph_.nodes[v];
      if (node.isPlaceholder()) {
        writePlaceholder(v);
        placeholders.push_back(id(v));
        continue;
      }
      if (!bodyStarted) {
        ghosts("");
        bodyStarted = true;
      }
      if (node.isOutput()) {
        writeOutput(v);
        continue;
      }
      writeBodyNode(v);
      rows.push_back(id(v));
      ghosts(node.name);
    }
    if (!placeholders.empty()) {
      out_ << "  { rank=source;";
      for (const std::string& p : placeholders) out_ << " " << p << ";";
      out_ << " }\n";
    }
    // One row per node, in program order (the chain is invisible; the data edges show).
    for (std::size_t i = 1; i < rows.size(); ++i)
      out_ << "  " << rows[i - 1] << " -> " << rows[i] << " [style=invis, weight=20];\n";
  }

  void writePlaceholder(NodeId v) {
    const Node& node = graph_.nodes[v];
    const InputSpec* in = program_.signature.inputForPlaceholder(node.name);
    std::string shape = "ellipse";
    std::string kind = "placeholder";
    if (in) {
      kind = std::string(toString(in->kind)) + (in->target.empty() ? "" : " '" + in->target + "'");
      switch (in->kind) {
        case InputKind::Buffer: shape = "cylinder"; break;
        case InputKind::UserInput: shape = "box"; break;
        case InputKind::Parameter: shape = "box3d"; break;
        case InputKind::ConstantTensor: shape = "note"; break;
        default: break;
      }
    }
    // A cylinder's top curve crosses its first line: a buffer's label starts lower.
    std::string label = in && in->kind == InputKind::Buffer ? "<FONT POINT-SIZE=\"6\"> </FONT><BR/>" : "";
    label += "<B>%" + escapeXml(node.name) + "</B>" + std::string(kLeft) + escapeXml(kind) + std::string(kLeft);
    if (!node.typeText.empty()) label += font(kFaint, escapeXml(node.typeText), 9) + std::string(kLeft);
    bool red = false;
    if (const auto it = divergingPlaceholder_.find(node.name); it != divergingPlaceholder_.end()) {
      for (const Divergence* d : it->second)
        label += font(kRed, "<B>final value differs from S_par</B> (" + modes(d->viewModes) + ")") + std::string(kLeft);
      red = true;
    }
    if (const auto it = missingInto_.find(node.name); it != missingInto_.end()) {
      for (const MissingWriteBack* m : it->second)
        label += font(kRed, "<B>never written back</B> (early copies %" + escapeXml(m->value) + " into it)") +
                 std::string(kLeft);
      red = true;
    }
    bool striped = false;
    const std::string fill = fillOf(v, striped);
    out_ << "  " << id(v) << " [shape=" << shape << ", style=\"filled\", fillcolor=\"" << fill << "\"";
    if (red) out_ << ", color=\"" << kRed << "\", penwidth=3";
    out_ << ", label=<" << label << ">];\n";
  }

  void writeBodyNode(NodeId v) {
    const Node& node = graph_.nodes[v];
    std::string label = font(kFaint, std::to_string(v), 9) + " <B>%" + escapeXml(node.name) + "</B> = " +
                        escapeXml(callText(node)) + std::string(kLeft);
    std::vector<std::string> notes;  // storage, in the colour of the storage
    const std::span<const RootAccess> writes = aliases_.writes(v);
    const auto copy = copyOf_.find(node.name);
    std::vector<RootId> written;
    for (const RootAccess& w : writes) written.push_back(w.root);
    if (copy == copyOf_.end() && !written.empty()) notes.push_back("writes " + rootList(written));
    std::vector<RootId> shared;
    for (RootId r : aliases_.rootsOf(v))
      if (r != v) shared.push_back(r);
    if (aliases_.isConservative(v)) {
      notes.push_back("no schema: may alias, read and write its tensor arguments");
    } else if (!shared.empty() && copy == copyOf_.end() && written.empty()) {
      notes.push_back(isCopyViewVariant(node.target) ? "becomes a view of " + rootList(shared) + " (ExecuTorch's view pass)"
                                                     : "shares storage with " + rootList(shared));
    }
    std::string noteLine;
    for (const std::string& n : notes) noteLine += (noteLine.empty() ? "" : "; ") + n;
    std::string line = node.typeText.empty() ? "" : font(kFaint, escapeXml(node.typeText), 9);
    if (!noteLine.empty()) {
      const RootId about = !written.empty() ? written.front() : !shared.empty() ? shared.front() : kNoNode;
      line += (line.empty() ? "" : "  ") + font(about == kNoNode ? kFaint : lineOf(about), escapeXml(clip(noteLine)), 9);
    }
    if (!line.empty()) label += line + std::string(kLeft);

    const bool isOffending = offending_.count(node.name) > 0;
    if (copy != copyOf_.end()) {
      const CopyExplanation& c = *copy->second;
      label += "<B>write-back of " + escapeXml(c.buffer) + "</B>" + std::string(kLeft);
      for (const std::string& line : wrap(std::string(toString(c.rule)) + " " + c.text))
        label += font(kWhy, escapeXml(line), 9) + std::string(kLeft);
    }
    if (isOffending) {
      for (const BrokenDependence* b : brokenInto_[node.name]) {
        label += font(kRed, "<B>too early: must follow %" + escapeXml(b->first) + "</B>") + std::string(kLeft);
      }
    }
    if (const auto it = firstDiverging_.find(node.name); it != firstDiverging_.end()) {
      for (const Divergence* d : it->second)
        label += font(kRed, "<B>first node whose result differs from S_par</B> (" + modes(d->viewModes) + ")") + std::string(kLeft);
    }

    bool striped = false;
    const std::string fill = fillOf(v, striped);
    out_ << "  " << id(v) << " [style=\"" << (striped ? "striped" : "rounded,filled") << "\", fillcolor=\"" << fill
         << "\"";
    if (isOffending) {
      out_ << ", color=\"" << kRed << "\", penwidth=3";
    } else if (!written.empty()) {
      out_ << ", color=\"" << lineOf(written.front()) << "\", penwidth=2";
    }
    if (copy != copyOf_.end()) out_ << ", peripheries=2";
    out_ << ", label=<" << label << ">];\n";
  }

  void writeGhost(std::size_t i) {
    const MissingWriteBack& m = ref_.missing[i];
    std::string label = font(kRed, "<B>missing write-back of " + escapeXml(m.buffer) + "</B>") + std::string(kLeft) +
                        font(kRed, "copy_(" + escapeXml(m.buffer) + ", " + escapeXml(m.value) + ")") + std::string(kLeft);
    for (const std::string& line : wrap(m.reason)) label += font(kRed, escapeXml(line), 9) + std::string(kLeft);
    out_ << "  missing" << i << " [style=\"rounded,dashed\", color=\"" << kRed << "\", penwidth=2, label=<" << label
         << ">];\n";
  }

  // A node of the input that the placement removed.
  void writeRemoved(NodeId v) {
    const Node& node = input_.graph.nodes[v];
    const std::string_view colour = ref_.refuted() ? kRed : kFaint;
    std::string args;
    for (const Arg& a : node.args) args += (args.empty() ? "" : ", ") + formatArg(a, input_.graph);
    std::string label = "<B>%" + escapeXml(node.name) + "</B> = " + escapeXml(clip(shortTarget(node.target) + "(" + args + ")")) +
                        std::string(kLeft) + font(colour, "<B>removed by the placement</B> (dead code elimination)", 9) +
                        std::string(kLeft);
    out_ << "  removed" << v << " [style=\"rounded,dashed\", color=\"" << colour << "\", fontcolor=\"" << colour
         << "\", label=<" << label << ">];\n";
    std::vector<std::string> sources;
    for (const Arg& a : node.args)
      forEachRef(a, [&](NodeId s) {
        const std::string& name = input_.graph.nodes[s].name;
        if (std::find(sources.begin(), sources.end(), name) == sources.end()) sources.push_back(name);
      });
    for (const std::string& name : sources) {
      if (const std::optional<std::size_t> from = graph_.indexOf(name))
        removedEdges_ += "  " + id(static_cast<NodeId>(*from)) + " -> removed" + std::to_string(v) +
                         " [style=dashed, color=\"" + std::string(colour) + "\"];\n";
    }
  }

  void writeOutput(NodeId v) {
    const std::vector<Arg> returned = graph_.returnedValues();
    const auto& specs = program_.signature.outputs;
    std::string t = "<TABLE BORDER=\"0\" CELLBORDER=\"1\" CELLSPACING=\"0\" CELLPADDING=\"4\"><TR><TD BGCOLOR=\"#eeeeee\">"
                    "<B>return</B></TD>";
    for (std::size_t i = 0; i < returned.size(); ++i) {
      std::string cell = std::to_string(i) + ": ";
      if (i < specs.size()) {
        cell += escapeXml(std::string(toString(specs[i].kind)));
        if (!specs[i].target.empty()) cell += " '" + escapeXml(specs[i].target) + "'";
      }
      std::vector<std::string> red;
      if (const auto it = divergingOutput_.find(i); it != divergingOutput_.end())
        for (const Divergence* d : it->second) red.push_back("differs (" + modes(d->viewModes) + ")");
      if (const auto it = missingAt_.find(i); it != missingAt_.end())
        for (const MissingWriteBack* m : it->second) red.push_back("no write-back: " + m->buffer + " keeps its old value");
      if (const auto it = changedOutput_.find(i); it != changedOutput_.end())
        for (const ChangedOutput* c : it->second)
          for (const std::string& line : wrap(c->reason, 40)) red.push_back(line);
      for (const std::string& line : red) cell += "<BR/>" + font(kRed, "<B>" + escapeXml(line) + "</B>");
      t += "<TD PORT=\"p" + std::to_string(i) + "\"" + (red.empty() ? "" : " BGCOLOR=\"" + std::string(kRedFill) + "\" COLOR=\"" + std::string(kRed) + "\"") + ">" + cell + "</TD>";
    }
    t += "</TR></TABLE>";
    out_ << "  " << id(v) << " [shape=plaintext, style=\"\", margin=0, label=<" << t << ">];\n";
    out_ << "  { rank=sink; " << id(v) << "; }\n";
  }

  void writeEdges() {
    for (NodeId v = 0; v < graph_.nodes.size(); ++v) {
      const Node& node = graph_.nodes[v];
      if (node.isPlaceholder()) continue;
      if (node.isOutput()) {
        const std::vector<Arg> returned = graph_.returnedValues();
        for (std::size_t i = 0; i < returned.size(); ++i) {
          if (!returned[i].isRef()) continue;
          out_ << "  " << id(returned[i].node) << " -> " << id(v) << ":p" << i << ":n";
          if (divergingOutput_.count(i) || changedOutput_.count(i) || missingAt_.count(i))
            out_ << " [color=\"" << kRed << "\", penwidth=2.5]";
          out_ << ";\n";
        }
        continue;
      }
      std::vector<NodeId> sources;
      auto add = [&](NodeId s) {
        if (std::find(sources.begin(), sources.end(), s) == sources.end()) sources.push_back(s);
      };
      for (const Arg& a : node.args) forEachRef(a, add);
      for (const auto& kv : node.kwargs) forEachRef(kv.second, add);
      const std::span<const RootAccess> writes = aliases_.writes(v);
      for (NodeId s : sources) {
        out_ << "  " << id(s) << " -> " << id(v);
        const auto w = std::find_if(writes.begin(), writes.end(), [&](const RootAccess& a) { return a.via == s; });
        if (w != writes.end()) {
          out_ << " [color=\"" << lineOf(w->root) << "\", fontcolor=\"" << lineOf(w->root)
               << "\", penwidth=2.2, label=\" writes\"]";
        } else if (const RootId r = colouredRootOf(s); r != kNoNode) {
          // Reading (or viewing) coloured storage: the edge carries its colour.
          out_ << " [color=\"" << lineOf(r) << "\", penwidth=1.3]";
        }
        out_ << ";\n";
      }
    }
    out_ << removedEdges_;
    // What binds each copy (R2, R3, C: the node it must follow, when that is no argument).
    for (const CopyExplanation& c : copies_) {
      if (offending_.count(c.copyNode)) continue;
      if (c.rule != CopyRule::R2 && c.rule != CopyRule::R3 && c.rule != CopyRule::CopyOrder) continue;
      const std::optional<std::size_t> from = graph_.indexOf(c.bindingNode);
      const std::optional<std::size_t> to = graph_.indexOf(c.copyNode);
      if (!from || !to) continue;
      out_ << "  " << id(static_cast<NodeId>(*from)) << " -> " << id(static_cast<NodeId>(*to))
           << " [style=dotted, color=\"" << kWhy << "\", fontcolor=\"" << kWhy << "\", constraint=false, label=\" "
           << toString(c.rule) << "\"];\n";
    }
    for (const BrokenDependence& b : ref_.broken) {
      const std::optional<std::size_t> from = graph_.indexOf(b.first);
      const std::optional<std::size_t> to = graph_.indexOf(b.offending);
      if (!from || !to) continue;
      std::string label;
      for (const std::string& line : wrap(b.reason, 36)) label += escapeXml(line) + std::string(kLeft);
      out_ << "  " << id(static_cast<NodeId>(*from)) << " -> " << id(static_cast<NodeId>(*to))
           << " [style=dashed, color=\"" << kRed << "\", fontcolor=\"" << kRed
           << "\", penwidth=2.5, constraint=false, label=<" << label << ">];\n";
    }
    for (std::size_t i = 0; i < ref_.missing.size(); ++i) {
      const MissingWriteBack& m = ref_.missing[i];
      // The ghost's arguments: the buffer it would write and the value it would read.
      for (const std::string& name : {m.buffer, m.value}) {
        const std::optional<std::size_t> from = graph_.indexOf(name);
        if (!from || (name == m.value && name == m.buffer)) continue;
        out_ << "  " << id(static_cast<NodeId>(*from)) << " -> missing" << i << " [style=dashed, color=\"" << kRed
             << "\", fontcolor=\"" << kRed << "\"" << (name == m.buffer ? ", label=\" would write\"" : "") << "];\n";
      }
    }
  }

  // The first coloured root value s may share, or kNoNode.
  RootId colouredRootOf(NodeId s) const {
    for (RootId r : aliases_.rootsOf(s))
      if (storage_.colour[r] >= 0) return r;
    return kNoNode;
  }

  const Program& program_;
  const Program& input_;
  const Graph& graph_;
  const AliasInfo aliases_;
  const std::vector<CopyExplanation>& copies_;
  const Refutation& ref_;
  const Storage storage_;
  std::map<std::string, const CopyExplanation*> copyOf_;
  std::set<std::string> offending_;
  std::map<std::string, std::vector<const BrokenDependence*>> brokenInto_;
  std::map<std::string, std::vector<const Divergence*>> firstDiverging_;
  std::map<std::string, std::vector<const Divergence*>> divergingPlaceholder_;
  std::map<std::size_t, std::vector<const Divergence*>> divergingOutput_;
  std::map<std::string, std::vector<const MissingWriteBack*>> missingInto_;
  std::map<std::size_t, std::vector<const ChangedOutput*>> changedOutput_;
  std::map<std::size_t, std::vector<const MissingWriteBack*>> missingAt_;
  std::map<std::string, std::vector<NodeId>> removedAfter_;  // input nodes, by the drawn node they follow
  std::string removedEdges_;
  std::ostringstream out_;
};

}  // namespace

std::string toDot(const Program& drawn, const Program& input, const SchemaTable& schemas,
                  const std::vector<CopyExplanation>& copies, const Refutation& refutation, const std::string& title,
                  const std::vector<std::string>& caption) {
  return DotWriter(drawn, input, schemas, copies, refutation).write(title, caption);
}

Drawing drawProgram(const Program& program, const SchemaTable& schemas, const DrawOptions& options) {
  const std::string placementName(toString(options.placement));
  PlacedProgram placed = place(program, options.placement, schemas);
  Refutation refutation;
  std::vector<std::string> caption;
  Drawing out;
  if (placed.failure) {
    refutation.placementFailure = placed.failure;
    out.verdict = "the " + placementName + " placement fails: " + *placed.failure;
  } else if (options.check) {
    oracle::CheckOptions check;
    check.placement = options.placement;
    check.inputs = options.inputs;
    check.behaviours = options.behaviours;
    check.seed = options.seed;
    const oracle::CheckReport report = oracle::check(program, check, schemas);
    if (report.verdict == oracle::Verdict::Error) {
      out.verdict = "placement " + placementName + "; the oracle cannot run the program: " + report.error;
    } else {
      const PlacedProgram early =
          options.placement == Placement::Early ? PlacedProgram{} : place(program, Placement::Early, schemas);
      refutation = refute(program, placed, options.placement == Placement::Early ? placed : early, report, schemas);
      const bool oracleRefutes = refutation.refuted();
      proofs::OrderingOptions proofOptions;
      proofOptions.minimality = false;  // the picture shows what is broken, not what is late
      useProofViolations(proofs::proveOrdering(program, placed, schemas, /*requireMinimal=*/false, proofOptions),
                         program, refutation);
      const std::string runs = " (" + std::to_string(report.inputs) + " input sets, seed " +
                               std::to_string(report.seed) + ", both view modes)";
      const std::string proofWords = refutation.broken.empty() ? "" : "; the ordering proof names the broken dependences";
      out.verdict = oracleRefutes ? "placement " + placementName + ": refuted by the oracle" + runs + proofWords
                    : refutation.refuted()
                        ? "placement " + placementName + ": refuted by the ordering proof (the oracle's runs" + runs +
                              " happen to see equal values)"
                        : "placement " + placementName + ": the oracle finds it equal to S_par" + runs;
      // Findings about the program (not the placement), once per kind and observation.
      std::vector<std::pair<std::string, std::vector<std::string>>> findings;
      for (const oracle::Mismatch& m : report.findings) {
        const std::string what = std::string(oracle::toString(m.kind)) + " on " + m.difference.label;
        auto it = std::find_if(findings.begin(), findings.end(), [&](const auto& f) { return f.first == what; });
        if (it == findings.end()) it = findings.insert(findings.end(), {what, {}});
        it->second.emplace_back(oracle::toString(m.viewMode));
      }
      for (const auto& [what, inModes] : findings)
        caption.push_back("about the program itself: " + what + " (" +
                          (inModes.size() > 1 ? std::string("both view modes") : inModes.front()) + ")");
    }
  } else {
    out.verdict = "placement " + placementName + " (not checked)";
  }
  caption.insert(caption.begin(), out.verdict);
  out.refuted = refutation.refuted();
  const Program& drawn = placed.failure ? program : placed.program;
  out.dot = toDot(drawn, program, schemas, placed.failure ? std::vector<CopyExplanation>{} : placed.copies, refutation,
                  options.title, caption);
  return out;
}

}  // namespace wb::draw
