#include "tools/mgd/plan_svg.h"

#include <fmt/format.h>

#include <algorithm>

namespace mgd::cli {
namespace {

constexpr double kLeft = 90, kWidth = 900, kHeight = 360, kGap = 70, kTop = 50;

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string KiB(uint64_t bytes) { return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024); }

// One partition's panel, its top at `top`.
std::string Panel(const PlannedPartition& p, size_t index, double top) {
  const CompiledModel& m = *p.model;
  std::vector<uint64_t> base(m.memory_objects.size(), 0);  // objects stacked bottom up
  uint64_t total = 0;
  for (size_t o = 0; o < m.memory_objects.size(); ++o) {
    base[o] = total;
    total += m.memory_objects[o];
  }
  const double steps = static_cast<double>(std::max<size_t>(m.dispatches.size(), 1));
  const double bytes = static_cast<double>(std::max<uint64_t>(total, 1));
  auto x = [&](double step) { return kLeft + kWidth * step / steps; };
  auto y = [&](double at) { return top + kHeight - kHeight * at / bytes; };
  std::string svg = fmt::format(
      "<text x=\"{}\" y=\"{}\" class=\"h\">partition {}: {} ({}), {} in {} buffer(s), lower bound {}</text>\n", kLeft,
      top - 12, index, memory::StrategyName(m.memory_strategy), memory::ProblemName(m.memory_problem), KiB(total),
      m.memory_objects.size(), KiB(p.lower_bound));
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" class=\"frame\"/>\n", kLeft, top, kWidth, kHeight);
  for (size_t o = 1; o < m.memory_objects.size(); ++o) {  // where one buffer ends and the next begins
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"object\"/>\n", kLeft,
                       y(static_cast<double>(base[o])), kLeft + kWidth, y(static_cast<double>(base[o])));
  }
  for (size_t b = 0; b < m.buffers.size(); ++b) {
    const CompiledBuffer& t = m.buffers[b];
    if (t.object < 0) continue;
    const double from = base[static_cast<size_t>(t.object)] + static_cast<double>(t.offset);
    const double hue = static_cast<double>((b * 47) % 360);
    svg += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"hsl({:.0f},60%,65%)\">"
        "<title>{}: {} at offset {} of buffer {}, steps {}..{}</title></rect>\n",
        x(t.first_use), y(from + static_cast<double>(t.bytes)), std::max(1.0, x(t.last_use + 1) - x(t.first_use)),
        std::max(0.5, y(from) - y(from + static_cast<double>(t.bytes))), hue, Escape(p.tensor_names[b]),
        KiB(t.bytes), t.offset, t.object, t.first_use, t.last_use);
  }
  const double bound_y = y(static_cast<double>(p.lower_bound));
  svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"bound\"/>\n", kLeft, bound_y,
                     kLeft + kWidth, bound_y);
  svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" class=\"axis\" fill=\"#c00\">lower bound</text>\n", kLeft + kWidth + 4,
                     bound_y + 4);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"end\">{}</text>\n", kLeft - 6, top + 10, KiB(total));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"end\">0</text>\n", kLeft - 6, top + kHeight);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" class=\"axis\" text-anchor=\"middle\">dispatch step (0..{})</text>\n",
                     kLeft + kWidth / 2, top + kHeight + 18, m.dispatches.size());
  return svg;
}

}  // namespace

std::string PlanSvg(const std::string& title, const std::vector<PlannedPartition>& partitions) {
  const double height = kTop + static_cast<double>(partitions.size()) * (kHeight + kGap) + 10;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<style>.frame{{fill:none;stroke:#888}} .object{{stroke:#444;stroke-width:1}} "
      ".bound{{stroke:#c00;stroke-dasharray:6 4}} .h{{font-weight:bold}} .axis{{fill:#444}}</style>\n"
      "<text x=\"{}\" y=\"20\" font-size=\"15\">{}</text>\n",
      kLeft + kWidth + 90, height, kLeft, Escape(title));
  for (size_t i = 0; i < partitions.size(); ++i) {
    svg += Panel(partitions[i], i, kTop + 20 + static_cast<double>(i) * (kHeight + kGap));
  }
  return svg + "</svg>\n";
}

}  // namespace mgd::cli
