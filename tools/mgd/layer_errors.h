// fp16 against fp32 layer by layer, from two `--dump-tensors` folders of one
// model: what `mgd check` prints and the accuracy guard (`mgd tune
// --accuracy`) searches by.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "model/graph.h"

namespace mgd::cli {

// The error of storing a value in fp16 (half an ulp: 11 significant bits):
// the least error any fp16 tensor has, so what a layer's own error is
// measured against when its inputs have none.
constexpr double kFp16Rounding = 1.0 / 2048;

struct LayerErrors {
  // DiffDumps' rows (fp16 against fp32), each node's with "growth": its
  // relative RMS over the largest of its inputs' (at least kFp16Rounding).
  nlohmann::json rows;
  nlohmann::json outputs;  // the rows of the graph's outputs
  nlohmann::json first;    // the first node row past the threshold, or null
  nlohmann::json largest;  // the node row of the largest growth, or null
};
absl::StatusOr<LayerErrors> CompareLayers(const std::string& fp16_dir, const std::string& fp32_dir, const Graph& graph,
                                          double threshold);

// A row's relative RMS (infinite when it has none: sizes differ, not finite).
double RelativeRms(const nlohmann::json& row);

// LiteRT's generated input (../shared/tools/litert-reference, --range -1,1):
// x[i] = sin((i + 1000 k) * 0.01) for input k, written to DIR/input_<k>.f32,
// so that a tool run without --input sees the numbers a reference made
// without one does. Every input must be float32.
absl::StatusOr<std::vector<std::string>> GeneratedInputs(const Graph& graph, const std::filesystem::path& dir);

// A folder that is removed when done, unless kept (the user's --out).
struct WorkFolder {
  std::filesystem::path path;
  bool keep = false;
  WorkFolder() = default;
  WorkFolder(const WorkFolder&) = delete;
  WorkFolder& operator=(const WorkFolder&) = delete;
  ~WorkFolder();
};
// `out` when given (kept), else a fresh folder under the temporary one named
// after `tool`; made either way.
absl::Status MakeWorkFolder(WorkFolder& work, const std::string& out, const std::string& tool);

}  // namespace mgd::cli
