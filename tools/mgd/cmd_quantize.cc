// mgd quantize: a float model to a full-integer int8 one (or int8 weights
// only), calibrated on images resized and scaled to the model's input, or
// on random inputs.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/status_macros.h"
#include "model/writer.h"
#include "ops/resize/resize.h"
#include "pipeline/image.h"
#include "quantizer/calibrate.h"
#include "quantizer/quantize_graph.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {
namespace {

// An image as the model's one input [1, H, W, 3] takes it: its RGB values
// scaled from [0, 255] to [lo, hi] and resized (bilinear, half-pixel
// centers, as MediaPipe's image-to-tensor) by mgd's own RESIZE_BILINEAR.
absl::StatusOr<std::vector<float>> ImageSample(const std::string& path, const Shape& input, float lo, float hi) {
  MGD_ASSIGN_OR_RETURN(pipeline::Image image, pipeline::ReadImage(path));
  Graph g;
  auto add = [&](const Shape& shape, DataType type) {
    Tensor t;
    t.name = "t" + std::to_string(g.tensors.size());
    t.shape = shape;
    t.type = type;
    g.tensors.push_back(std::move(t));
    return static_cast<int>(g.tensors.size()) - 1;
  };
  const int x = add({1, image.height, image.width, 3}, DataType::kFloat32);
  const int size = add({2}, DataType::kInt32);
  const int32_t hw[2] = {input[1], input[2]};
  g.tensors[static_cast<size_t>(size)].data.assign(reinterpret_cast<const uint8_t*>(hw),
                                                   reinterpret_cast<const uint8_t*>(hw) + sizeof(hw));
  g.tensors[static_cast<size_t>(size)].is_constant = true;
  const int y = add(input, DataType::kFloat32);
  Node resize;
  resize.op = OpKind::kResizeBilinear;
  resize.attributes = ops::ResizeAttributes{false, true};
  resize.inputs = {x, size};
  resize.outputs = {y};
  g.nodes.push_back(std::move(resize));
  g.inputs = {x};
  g.outputs = {y};
  MGD_ASSIGN_OR_RETURN(std::unique_ptr<Interpreter> interpreter, Interpreter::Create(std::move(g), {}));
  float* pixels = interpreter->input(0).as<float>();
  const size_t n = static_cast<size_t>(image.width) * image.height;
  for (size_t p = 0; p < n; ++p) {
    for (size_t c = 0; c < 3; ++c) {
      pixels[p * 3 + c] = lo + (hi - lo) * static_cast<float>(image.pixels[p * static_cast<size_t>(image.channels) + c]) / 255.0f;
    }
  }
  MGD_RETURN_IF_ERROR(interpreter->Invoke());
  const TensorRef& out = interpreter->output(0);
  return std::vector<float>(out.as<float>(), out.as<float>() + out.elements());
}

absl::StatusOr<std::vector<quantizer::Sample>> Samples(const QuantizeOptions& options, const Graph& graph) {
  if (options.calibration.empty() == (options.random_samples == 0)) {
    return UsageError("quantize: give calibration images (--calibration) or --random-samples N, one of the two");
  }
  if (options.random_samples > 0) {
    return quantizer::RandomSamples(graph, options.random_samples, 1, options.range_lo, options.range_hi);
  }
  const Tensor* input = graph.inputs.size() == 1 ? &graph.tensors[static_cast<size_t>(graph.inputs[0])] : nullptr;
  if (input == nullptr || input->type != DataType::kFloat32 || input->shape.size() != 4 || input->shape[0] != 1 ||
      input->shape[3] != 3) {
    return UsageError(fmt::format(
        "quantize: calibration images need a model with one float32 [1,H,W,3] input; {} has {} input(s){}",
        options.model, graph.inputs.size(),
        input != nullptr ? fmt::format(", {} {}", DataTypeName(input->type), ShapeToString(input->shape)) : ""));
  }
  std::vector<quantizer::Sample> samples;
  for (const std::string& path : options.calibration) {
    MGD_ASSIGN_OR_RETURN(std::vector<float> values, ImageSample(path, input->shape, options.range_lo, options.range_hi));
    samples.push_back({std::move(values)});
  }
  return samples;
}

}  // namespace

absl::Status Quantize(const QuantizeOptions& options) {
  if (!(options.range_lo < options.range_hi)) {
    return UsageError(fmt::format("quantize: --input-range {},{} is empty", options.range_lo, options.range_hi));
  }
  MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(options.model));
  MGD_ASSIGN_OR_RETURN(std::vector<quantizer::Sample> samples, Samples(options, graph));
  quantizer::CalibrationOptions calibration_options;
  calibration_options.percentile = options.percentile / 100.0;
  MGD_ASSIGN_OR_RETURN(quantizer::Calibration calibration, quantizer::Calibrate(graph, samples, calibration_options));
  quantizer::QuantizeOptions q;
  q.per_tensor = options.per_tensor;
  q.dynamic_range = options.dynamic_range;
  q.int8_io = options.int8_io;
  quantizer::QuantizeReport report;
  MGD_ASSIGN_OR_RETURN(Graph quantized, quantizer::QuantizeGraph(calibration, q, &report));
  MGD_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, WriteModel(quantized));
  MGD_RETURN_IF_ERROR(WriteFileAtomically(options.out, bytes.data(), bytes.size()));
  std::error_code error;  // the float model's size is only reported
  const uintmax_t float_bytes = std::filesystem::file_size(options.model, error);
  if (options.json) {
    nlohmann::json j = {{"out", options.out},
                        {"int8_nodes", report.int8_nodes},
                        {"float_nodes", report.float_nodes},
                        {"conversions", report.conversions},
                        {"bytes", bytes.size()},
                        {"float_bytes", float_bytes},
                        {"samples", samples.size()}};
    std::puts(j.dump().c_str());
  } else {
    std::printf("%s: %d ops int8, %d float, %d QUANTIZE/DEQUANTIZE added; %zu bytes (float: %zu); %zu calibration samples\n",
                options.out.c_str(), report.int8_nodes, report.float_nodes, report.conversions, bytes.size(),
                static_cast<size_t>(float_bytes), samples.size());
  }
  return absl::OkStatus();
}

}  // namespace mgd::cli
