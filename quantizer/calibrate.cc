#include "quantizer/calibrate.h"

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <random>

#include "interpreter/interpreter.h"

namespace mgd::quantizer {
namespace {

constexpr int kBins = 2048;

bool IsFloat(const Tensor& t) { return t.type == DataType::kFloat32; }

// The graph with each folded node's output as a float constant and the
// node gone: the values the interpreter computed at load.
Graph WithFoldsAsConstants(const Graph& graph, const Interpreter& interpreter) {
  Graph out = graph;
  out.nodes.clear();
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (interpreter.placements()[n].where != NodePlacement::Where::kFolded) {
      out.nodes.push_back(graph.nodes[n]);
      continue;
    }
    for (int t : graph.nodes[n].outputs) {
      const TensorRef& folded = interpreter.tensor(t);
      Tensor& tensor = out.tensors[static_cast<size_t>(t)];
      tensor.data.assign(folded.data, folded.data + folded.bytes);
      tensor.is_constant = true;
    }
  }
  return out;
}

// Runs every sample, calling visit(tensor index, its values) for each float
// tensor the graph computes or is given.
template <typename Visit>
absl::Status RunAll(Interpreter& interpreter, const std::vector<Sample>& samples, Visit visit) {
  const Graph& g = interpreter.graph();
  for (size_t s = 0; s < samples.size(); ++s) {
    const Sample& sample = samples[s];
    if (sample.size() != g.inputs.size()) {
      return absl::InvalidArgumentError(
          fmt::format("calibration sample {} has {} inputs, the model {}", s, sample.size(), g.inputs.size()));
    }
    for (size_t i = 0; i < sample.size(); ++i) {
      TensorRef& in = interpreter.input(i);
      if (in.type != DataType::kFloat32 || static_cast<int64_t>(sample[i].size()) != in.elements()) {
        return absl::InvalidArgumentError(fmt::format(
            "calibration sample {}: input {} '{}' is {} {}, the sample has {} floats", s, i, in.name,
            DataTypeName(in.type), ShapeToString(in.shape), sample[i].size()));
      }
      std::copy(sample[i].begin(), sample[i].end(), in.as<float>());
    }
    if (absl::Status st = interpreter.Invoke(); !st.ok()) {
      return absl::Status(st.code(), fmt::format("calibration sample {}: {}", s, std::string(st.message())));
    }
    for (size_t t = 0; t < g.tensors.size(); ++t) {
      const TensorRef& ref = interpreter.tensor(static_cast<int>(t));
      if (!IsFloat(g.tensors[t]) || ref.data == nullptr) continue;
      visit(t, ref.as<float>(), ref.elements());
    }
  }
  return absl::OkStatus();
}

// The range holding `percentile` of a histogram's values over `whole`,
// cut evenly from both ends, widened to the bins' edges.
Range Cut(const std::vector<uint64_t>& bins, const Range& whole, double percentile) {
  uint64_t total = 0;
  for (uint64_t b : bins) total += b;
  const auto cut = static_cast<uint64_t>(std::floor(static_cast<double>(total) * (1.0 - percentile) / 2.0));
  const double width = (static_cast<double>(whole.max) - whole.min) / kBins;
  size_t lo = 0, hi = bins.size() - 1;
  for (uint64_t below = 0; lo < hi && below + bins[lo] <= cut; ++lo) below += bins[lo];
  for (uint64_t above = 0; hi > lo && above + bins[hi] <= cut; --hi) above += bins[hi];
  return {static_cast<float>(whole.min + width * static_cast<double>(lo)),
          static_cast<float>(whole.min + width * static_cast<double>(hi + 1))};
}

}  // namespace

absl::StatusOr<Calibration> Calibrate(const Graph& graph, const std::vector<Sample>& samples,
                                      const CalibrationOptions& options) {
  if (samples.empty()) return absl::InvalidArgumentError("calibration needs at least one sample");
  if (!(options.percentile > 0.0 && options.percentile <= 1.0)) {
    return absl::InvalidArgumentError(fmt::format("percentile {} is not in (0, 1]", options.percentile));
  }
  InterpreterOptions io;
  io.preserve_all_tensors = true;
  absl::StatusOr<std::unique_ptr<Interpreter>> interpreter = Interpreter::Create(graph, io);
  if (!interpreter.ok()) return interpreter.status();
  Calibration c{WithFoldsAsConstants(graph, **interpreter), std::vector<Range>(graph.tensors.size())};
  auto take = [&](size_t t, const float* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      if (std::isfinite(v[i])) c.ranges[t].Take(v[i]);
    }
  };
  if (absl::Status s = RunAll(**interpreter, samples, take); !s.ok()) return s;
  if (options.percentile < 1.0) {
    const std::vector<Range> whole = c.ranges;
    std::vector<std::vector<uint64_t>> bins(graph.tensors.size());
    auto count = [&](size_t t, const float* v, int64_t n) {
      const Range& r = whole[t];
      if (!r.seen() || r.max == r.min || graph.tensors[t].is_constant) return;
      if (bins[t].empty()) bins[t].assign(kBins, 0);
      const double per_bin = kBins / (static_cast<double>(r.max) - r.min);
      for (int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(v[i])) continue;
        const auto b = static_cast<int64_t>((static_cast<double>(v[i]) - r.min) * per_bin);
        ++bins[t][static_cast<size_t>(std::clamp<int64_t>(b, 0, kBins - 1))];
      }
    };
    if (absl::Status s = RunAll(**interpreter, samples, count); !s.ok()) return s;
    for (size_t t = 0; t < bins.size(); ++t) {
      if (!bins[t].empty()) c.ranges[t] = Cut(bins[t], whole[t], options.percentile);
    }
  }
  // Constants the run does not visit (the interpreter may not hold them
  // as its own tensors): their values.
  for (size_t t = 0; t < c.graph.tensors.size(); ++t) {
    const Tensor& tensor = c.graph.tensors[t];
    if (!tensor.is_constant || !IsFloat(tensor) || c.ranges[t].seen()) continue;
    take(t, reinterpret_cast<const float*>(tensor.data.data()), static_cast<int64_t>(tensor.data.size() / 4));
  }
  return c;
}

std::vector<Sample> RandomSamples(const Graph& graph, int count, uint64_t seed, float lo, float hi) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<float> value(lo, hi);
  std::vector<Sample> samples(static_cast<size_t>(std::max(count, 0)));
  for (Sample& sample : samples) {
    for (int t : graph.inputs) {
      std::vector<float>& v = sample.emplace_back(static_cast<size_t>(NumElements(graph.tensors[static_cast<size_t>(t)].shape)));
      for (float& x : v) x = value(random);
    }
  }
  return samples;
}

}  // namespace mgd::quantizer
