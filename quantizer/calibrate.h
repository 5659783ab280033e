// Calibration: the float graph run on the CPU over sample inputs, each
// float tensor's range recorded, for the quantizer (quantize_graph.h).
#pragma once

#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd::quantizer {

// The real values a tensor took over calibration (NaN and Inf left out).
struct Range {
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
  bool seen() const { return min <= max; }
  void Take(float v) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
};

// One calibration run's inputs: a float vector per graph input, in order,
// of its element count.
using Sample = std::vector<std::vector<float>>;

struct Calibration {
  // The graph with what the interpreter folds at load (DEQUANTIZE of fp16 or
  // 8-bit weights) made float constants: what the quantizer rewrites.
  Graph graph;
  std::vector<Range> ranges;  // per tensor of `graph`; constants' too
};

// How a tensor's range is taken from its values.
struct CalibrationOptions {
  // Keep this share of each activation's values inside its range, cutting
  // outliers from both ends (TFLite's converter: 1.0, the plain min and
  // max). Below 1, each tensor's values are kept in a histogram.
  double percentile = 1.0;
};

// Runs `graph` on the CPU once per sample; an error names the sample and
// input that do not fit, or the node that fails.
absl::StatusOr<Calibration> Calibrate(const Graph& graph, const std::vector<Sample>& samples,
                                      const CalibrationOptions& options = {});

// `count` samples of values uniform in [lo, hi) for each float input: a
// calibration where no real inputs are at hand (mgd modelgen --int8).
// Deterministic for a seed.
std::vector<Sample> RandomSamples(const Graph& graph, int count, uint64_t seed, float lo, float hi);

}  // namespace mgd::quantizer
