// core/memplan_svg.cpp: the lifetime chart of a memory plan (DESIGN §8, `wbcheck plan --svg`).
//
// Owns the drawing only; the numbers come from core/memplan.cpp. Time (node index) runs
// across; each planned tensor is one bar over its inclusive lifetime; the `end` placement is
// drawn above `early` with the same rows in the same order, so a shortened bar stands out.
// Write-back copies are red markers; a live-bytes profile under each panel, on one scale,
// shows where each peak is. Every bar carries a tooltip with the full record.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/memplan.h"
#include "core/xml.h"

namespace wb {
namespace {

// Layout, in SVG user units (px).
constexpr int kMargin = 16;
constexpr int kRowHeight = 18;
constexpr int kBarHeight = 12;
constexpr int kProfileHeight = 44;
constexpr int kAxisHeight = 22;
constexpr int kPanelHeaderHeight = 42;
constexpr int kPanelGap = 18;
constexpr int kCharWidth = 7;  // 12px sans-serif, a generous average

struct Palette {
  std::string_view fill;
  std::string_view label;
};
constexpr Palette kMutableBuffer{"#7f8c9a", "mutable buffer (lives [0, max])"};
constexpr Palette kGraphInput{"#4e79a7", "graph input"};
constexpr Palette kIntermediate{"#59a14f", "intermediate"};
constexpr Palette kGraphOutput{"#b07aa1", "graph output"};
constexpr Palette kWriteBackValue{"#f28e2b", "write-back value (early placement shortens it)"};
constexpr std::string_view kCopyColour = "#d62728";
constexpr std::string_view kPeakColour = "#fff3bf";

const Palette& paletteFor(const PlannedTensor& t) {
  if (t.mutableBuffer) return kMutableBuffer;
  if (t.writeBackValue) return kWriteBackValue;
  if (t.graphInput) return kGraphInput;
  if (t.graphOutput) return kGraphOutput;
  return kIntermediate;
}

std::string formatBytes(std::int64_t bytes) {
  std::int64_t magnitude = bytes < 0 ? -bytes : bytes;
  if (magnitude < 1024) return fmt::format("{} B", bytes);
  if (magnitude < 1024 * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024.0);
  if (magnitude < std::int64_t{1024} * 1024 * 1024)
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
}

// "1,536 B" with separators, for the exact numbers in the title.
std::string exactBytes(std::int64_t bytes) {
  std::string digits = std::to_string(bytes < 0 ? -bytes : bytes);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (bytes < 0 ? "-" : "") + out + " B";
}

using RowKey = std::pair<std::string, int>;  // (node, element)

std::string rowLabel(const RowKey& key) {
  return key.second < 0 ? fmt::format("%{}", key.first) : fmt::format("%{}[{}]", key.first, key.second);
}

struct Panel {
  const MemoryPlan* plan = nullptr;
  std::string heading;  // "end: every copy just before the output"
};

class Chart {
 public:
  Chart(std::vector<Panel> panels, std::string title, std::string subtitle)
      : panels_(std::move(panels)), title_(std::move(title)), subtitle_(std::move(subtitle)) {
    layoutRows();
  }
  std::string render();

 private:
  void layoutRows();
  void drawPanel(const Panel& panel, int top);
  int panelHeight() const {
    return kPanelHeaderHeight + static_cast<int>(rows_.size()) * kRowHeight + kProfileHeight + kAxisHeight;
  }
  double x(double index) const { return plotLeft_ + index * unit_; }

  std::vector<Panel> panels_;
  std::string title_;
  std::string subtitle_;
  std::vector<RowKey> rows_;
  std::map<RowKey, std::int64_t> rowBytes_;
  int maxIndex_ = 0;
  double unit_ = 10;
  int plotLeft_ = 0;
  int plotWidth_ = 0;
  std::int64_t profileScale_ = 1;
  std::string out_;
};

void Chart::layoutRows() {
  // The same rows in every panel: the first panel's order, then tensors only later ones have.
  std::map<RowKey, bool> seen;
  std::size_t longestLabel = 8;
  for (const Panel& p : panels_) {
    maxIndex_ = std::max(maxIndex_, p.plan->maxIndex);
    profileScale_ = std::max(profileScale_, p.plan->peakLiveBytes);
    for (const PlannedTensor& t : p.plan->tensors) {
      RowKey key{t.node, t.element};
      if (seen.emplace(key, true).second) {
        rows_.push_back(key);
        rowBytes_[key] = t.allocatedBytes;
        longestLabel = std::max(longestLabel, rowLabel(key).size() + formatBytes(t.allocatedBytes).size() + 2);
      }
    }
  }
  int columns = maxIndex_ + 1;
  unit_ = std::clamp(960.0 / columns, 4.0, 40.0);
  plotLeft_ = kMargin + static_cast<int>(longestLabel) * kCharWidth + 10;
  plotWidth_ = static_cast<int>(unit_ * columns);
}

void Chart::drawPanel(const Panel& panel, int top) {
  const MemoryPlan& plan = *panel.plan;
  out_ += fmt::format("<g class=\"panel\">\n");
  out_ += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"heading\">{}</text>\n", kMargin, top + 17, escapeXml(panel.heading));
  out_ += fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"measure\">peak live bytes {} at index {} · greedy arena {} in {} "
      "shared object{}</text>\n",
      kMargin, top + 34, exactBytes(plan.peakLiveBytes), plan.peakIndex,
      exactBytes(plan.arenaBytes), plan.sharedObjects.size(), plan.sharedObjects.size() == 1 ? "" : "s");

  int rowsTop = top + kPanelHeaderHeight;
  int rowsHeight = static_cast<int>(rows_.size()) * kRowHeight;
  int profileTop = rowsTop + rowsHeight;
  int axisTop = profileTop + kProfileHeight;

  // The peak column, behind everything.
  out_ += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>\n",
                      x(plan.peakIndex), rowsTop, unit_, rowsHeight + kProfileHeight, kPeakColour);
  // Zebra rows and row labels.
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    int y = rowsTop + static_cast<int>(r) * kRowHeight;
    if (r % 2 == 1)
      out_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#000\" fill-opacity=\"0.035\"/>\n",
                          kMargin, y, plotLeft_ + plotWidth_ - kMargin, kRowHeight);
    out_ += fmt::format("<text x=\"{}\" y=\"{}\" class=\"label\">{}</text>", kMargin, y + 13,
                        escapeXml(rowLabel(rows_[r])));
    out_ += fmt::format("<text x=\"{}\" y=\"{}\" class=\"size\" text-anchor=\"end\">{}</text>\n", plotLeft_ - 8,
                        y + 13, formatBytes(rowBytes_[rows_[r]]));
  }
  // Grid lines every 5 indices (every index when they are wide).
  int step = unit_ >= 14 ? 1 : unit_ >= 6 ? 5 : 10;
  for (int i = 0; i <= maxIndex_ + 1; i += step)
    out_ += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" class=\"grid\"/>\n", x(i), rowsTop,
                        axisTop);

  // Bars.
  std::map<RowKey, std::size_t> rowOf;
  for (std::size_t r = 0; r < rows_.size(); ++r) rowOf[rows_[r]] = r;
  std::map<std::string, int> rowOfNode;  // single-result rows, for the copy markers
  for (std::size_t r = 0; r < rows_.size(); ++r)
    if (!rowOfNode.contains(rows_[r].first)) rowOfNode[rows_[r].first] = static_cast<int>(r);
  for (const PlannedTensor& t : plan.tensors) {
    std::size_t r = rowOf[{t.node, t.element}];
    double y = rowsTop + static_cast<double>(r) * kRowHeight + (kRowHeight - kBarHeight) / 2.0;
    std::string aliasText;
    for (const SpecAlias& a : t.aliases) aliasText += fmt::format("\n  %{} ({})", a.node, toString(a.kind));
    std::string tooltip = fmt::format(
        "{} {}\n{} bytes ({} allocated), lifetime [{}, {}]\nshared object {} at offset {} (arena offset {}){}{}{}",
        rowLabel({t.node, t.element}), t.type, t.nbytes, t.allocatedBytes, t.start, t.end, t.sharedObject,
        t.offsetInObject, t.memOffset,
        t.inplaceBase ? fmt::format("\nplaced at its base %{} (_share_alloc_with_arg_idx)", plan.tensors[*t.inplaceBase].node)
                      : std::string(),
        aliasText.empty() ? "" : "\nshared by:", aliasText);
    out_ += fmt::format(
        "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" rx=\"2\" fill=\"{}\"{}>"
        "<title>{}</title></rect>\n",
        x(t.start) + 0.5, y, std::max(1.0, (t.end - t.start + 1) * unit_ - 1.0), kBarHeight, paletteFor(t).fill,
        t.inplaceBase ? " stroke=\"#222\" stroke-dasharray=\"3,2\"" : "", escapeXml(tooltip));
  }

  // Write-back copies: a red line through the panel and a diamond on the buffer and value rows.
  for (const WriteBackCopy& copy : plan.writeBacks) {
    double cx = x(copy.index) + unit_ / 2.0;
    out_ += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.5\" "
        "stroke-dasharray=\"4,2\"><title>%{4} = copy_(%{5}, %{6}) at index {7}</title></line>\n",
        cx, rowsTop, axisTop, kCopyColour, escapeXml(copy.copyNode), escapeXml(copy.buffer), escapeXml(copy.value),
        copy.index);
    for (const std::string& node : {copy.buffer, copy.value}) {
      auto it = rowOfNode.find(node);
      if (it == rowOfNode.end()) continue;
      double cy = rowsTop + it->second * kRowHeight + kRowHeight / 2.0;
      out_ += fmt::format(
          "<path d=\"M {0:.1f} {1:.1f} l 5 5 l -5 5 l -5 -5 z\" fill=\"{2}\" stroke=\"#fff\" stroke-width=\"0.8\"/>\n",
          cx, cy - 5, kCopyColour);
    }
  }
  // The live-bytes profile, one scale for every panel.
  std::string path = fmt::format("M {:.1f} {}", x(0), profileTop + kProfileHeight - 4);
  double usable = kProfileHeight - 8;
  for (std::size_t i = 0; i < plan.liveBytes.size(); ++i) {
    double h = usable * static_cast<double>(plan.liveBytes[i]) / static_cast<double>(profileScale_);
    double y = profileTop + kProfileHeight - 4 - h;
    path += fmt::format(" L {:.1f} {:.1f} L {:.1f} {:.1f}", x(static_cast<double>(i)), y,
                        x(static_cast<double>(i) + 1), y);
  }
  path += fmt::format(" L {:.1f} {} Z", x(static_cast<double>(plan.liveBytes.size())), profileTop + kProfileHeight - 4);
  out_ += fmt::format("<path d=\"{}\" fill=\"#9ecae1\" stroke=\"#3182bd\" stroke-width=\"1\"/>\n", path);
  out_ += fmt::format("<text x=\"{}\" y=\"{}\" class=\"label\">live bytes</text>", kMargin, profileTop + 18);
  out_ += fmt::format("<text x=\"{}\" y=\"{}\" class=\"size\" text-anchor=\"end\">peak {}</text>\n",
                      plotLeft_ - 8, profileTop + 34, formatBytes(plan.peakLiveBytes));

  // The axis: node indices, and the node's name as a tooltip on each column.
  out_ += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#444\"/>\n", plotLeft_, axisTop,
                      plotLeft_ + plotWidth_, axisTop);
  int labelStep = std::max(step, static_cast<int>(std::ceil(24.0 / unit_)));
  for (int i = 0; i <= maxIndex_; ++i) {
    if (i % labelStep == 0 || i == maxIndex_)
      out_ += fmt::format("<text x=\"{:.1f}\" y=\"{}\" class=\"tick\" text-anchor=\"middle\">{}</text>", x(i) + unit_ / 2,
                          axisTop + 14, i);
    if (static_cast<std::size_t>(i) < plan.nodeNames.size())
      out_ += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"transparent\"><title>{}: %{}</title></rect>\n",
          x(i), axisTop, unit_, kAxisHeight, i, escapeXml(plan.nodeNames[static_cast<std::size_t>(i)]));
  }
  out_ += fmt::format("<text x=\"{}\" y=\"{}\" class=\"tick\" text-anchor=\"end\">node index</text>\n",
                      plotLeft_ - 8, axisTop + 14);
  out_ += "</g>\n";
}

std::string Chart::render() {
  int titleHeight = subtitle_.empty() ? 34 : 56;
  int legendHeight = 62;  // up to three lines
  int width = plotLeft_ + plotWidth_ + kMargin;
  // Wide enough for the title (17px bold) and the subtitle (12.5px) as well as the plot.
  width = std::max({width, 720, 2 * kMargin + static_cast<int>(title_.size()) * 10,
                    2 * kMargin + static_cast<int>(subtitle_.size()) * 7});
  int height = titleHeight + static_cast<int>(panels_.size()) * (panelHeight() + kPanelGap) + legendHeight;

  out_ = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
      width, height);
  out_ +=
      "<style>\n"
      "  .title { font-size: 17px; font-weight: bold; fill: #222; }\n"
      "  .subtitle { font-size: 12.5px; fill: #333; }\n"
      "  .heading { font-size: 13.5px; font-weight: bold; fill: #222; }\n"
      "  .measure { font-size: 12px; fill: #444; }\n"
      "  .label { font-size: 11.5px; fill: #222; font-family: DejaVu Sans Mono, Menlo, monospace; }\n"
      "  .size { font-size: 11px; fill: #555; }\n"
      "  .tick { font-size: 10px; fill: #555; }\n"
      "  .legend { font-size: 11.5px; fill: #333; }\n"
      "  .grid { stroke: #000; stroke-opacity: 0.08; }\n"
      "</style>\n";
  out_ += fmt::format("<rect width=\"{}\" height=\"{}\" fill=\"#fff\"/>\n", width, height);
  out_ += fmt::format("<text x=\"{}\" y=\"24\" class=\"title\">{}</text>\n", kMargin, escapeXml(title_));
  if (!subtitle_.empty())
    out_ += fmt::format("<text x=\"{}\" y=\"45\" class=\"subtitle\">{}</text>\n", kMargin, escapeXml(subtitle_));

  int top = titleHeight;
  for (const Panel& panel : panels_) {
    drawPanel(panel, top);
    top += panelHeight() + kPanelGap;
  }

  // Legend, in two lines.
  int lx = kMargin;
  int ly = top + 4;
  auto swatch = [&](std::string_view fill, std::string_view label) {
    int w = 26 + static_cast<int>(label.size()) * 6 + 14;
    if (lx + w > width - kMargin) {
      lx = kMargin;
      ly += 18;
    }
    out_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"18\" height=\"10\" rx=\"2\" fill=\"{}\"/>", lx, ly, fill);
    out_ += fmt::format("<text x=\"{}\" y=\"{}\" class=\"legend\">{}</text>\n", lx + 24, ly + 9, escapeXml(label));
    lx += w;
  };
  for (const Palette* p : {&kMutableBuffer, &kWriteBackValue, &kGraphInput, &kIntermediate, &kGraphOutput})
    swatch(p->fill, p->label);
  swatch(kPeakColour, "peak column");
  // The copy marker, wrapped like the swatches.
  constexpr std::string_view kCopyLabel = "write-back copy_ (on its buffer and value)";
  if (lx + 26 + static_cast<int>(kCopyLabel.size()) * 6 > width - kMargin) {
    lx = kMargin;
    ly += 18;
  }
  out_ += fmt::format(
      "<path d=\"M {0} {1} l 5 5 l -5 5 l -5 -5 z\" fill=\"{2}\"/><text x=\"{3}\" y=\"{4}\" class=\"legend\">"
      "{5}</text>\n",
      lx + 9, ly, kCopyColour, lx + 24, ly + 9, kCopyLabel);
  out_ += "</svg>\n";
  return std::move(out_);
}

}  // namespace

std::string renderLifetimeChartSvg(const MemoryPlan& end, const MemoryPlan& early) {
  PlanComparison c = comparePlans(end, early);
  std::string title = fmt::format("Write-back placement and memory: saves {} of peak live bytes ({:.1f}%)",
                                  exactBytes(c.peakSavedBytes), c.peakSavedPercent);
  std::string subtitle = fmt::format(
      "peak live bytes: end {} → early {}   ·   greedy arena: end {} → early {} ({} {}, {:.1f}%)",
      exactBytes(end.peakLiveBytes), exactBytes(early.peakLiveBytes), exactBytes(end.arenaBytes),
      exactBytes(early.arenaBytes), c.arenaSavedBytes >= 0 ? "saves" : "costs",
      exactBytes(c.arenaSavedBytes >= 0 ? c.arenaSavedBytes : -c.arenaSavedBytes),
      c.arenaSavedPercent >= 0 ? c.arenaSavedPercent : -c.arenaSavedPercent);
  std::vector<Panel> panels = {
      Panel{&end, "end: every write-back copy just before the output (upstream)"},
      Panel{&early, "early: each write-back copy at its earliest safe point"},
  };
  return Chart(std::move(panels), std::move(title), std::move(subtitle)).render();
}

std::string renderLifetimeChartSvg(const MemoryPlan& plan, std::string_view title) {
  std::vector<Panel> panels = {Panel{&plan, "lifetimes"}};
  return Chart(std::move(panels), std::string(title), "").render();
}

}  // namespace wb
