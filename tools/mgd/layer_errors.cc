#include "tools/mgd/layer_errors.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/files.h"
#include "model/status_macros.h"
#include "tools/mgd/commands.h"
#include "tools/mgd/tensor_dump.h"

namespace mgd::cli {

namespace fs = std::filesystem;
using nlohmann::json;

double RelativeRms(const json& row) {
  return row.contains("relative_rms") && row["relative_rms"].is_number() ? row["relative_rms"].get<double>() : INFINITY;
}

absl::StatusOr<LayerErrors> CompareLayers(const std::string& fp16_dir, const std::string& fp32_dir, const Graph& graph,
                                          double threshold) {
  MGD_ASSIGN_OR_RETURN(json diff, DiffDumps(fp16_dir, fp32_dir));
  LayerErrors e;
  e.rows = diff["tensors"];
  e.outputs = json::array();
  std::map<int, double> error_of;  // by tensor
  for (const json& row : e.rows) {
    if (row.contains("tensor")) error_of[row["tensor"].get<int>()] = RelativeRms(row);
  }
  const std::set<int> outputs(graph.outputs.begin(), graph.outputs.end());
  double largest = 0;
  for (json& row : e.rows) {
    if (!row.contains("node")) continue;  // a model input
    const auto node = static_cast<size_t>(row["node"].get<int>());
    if (node >= graph.nodes.size()) return absl::InternalError(fmt::format("{}: node {} is not in the model", fp16_dir, node));
    double inputs_error = 0;
    for (int t : graph.nodes[node].inputs) {
      if (auto it = error_of.find(t); it != error_of.end()) inputs_error = std::max(inputs_error, it->second);
    }
    const double growth = RelativeRms(row) / std::max(inputs_error, kFp16Rounding);
    row["growth"] = std::isfinite(growth) ? json(growth) : json("inf");
    if (e.first.is_null() && Diverges(row, threshold)) e.first = row;
    if (e.largest.is_null() || growth > largest) {
      e.largest = row;
      largest = growth;
    }
    if (row.contains("tensor") && outputs.count(row["tensor"].get<int>())) e.outputs.push_back(row);
  }
  return e;
}

absl::StatusOr<std::vector<std::string>> GeneratedInputs(const Graph& graph, const fs::path& dir) {
  std::vector<std::string> files;
  for (size_t k = 0; k < graph.inputs.size(); ++k) {
    const Tensor& t = graph.tensors[static_cast<size_t>(graph.inputs[k])];
    if (t.type != DataType::kFloat32) {
      return UsageError(fmt::format("input {} ('{}') has type {}: give --input files", k, t.name, DataTypeName(t.type)));
    }
    std::vector<float> values(static_cast<size_t>(NumElements(t.shape)));
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(std::sin(static_cast<double>(i + 1000 * k) * 0.01));
    const std::string file = (dir / fmt::format("input_{}.f32", k)).string();
    std::string bytes(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
    MGD_RETURN_IF_ERROR(WriteFileAtomically(file, bytes));
    files.push_back(file);
  }
  return files;
}

WorkFolder::~WorkFolder() {
  std::error_code ignored;
  if (!keep && !path.empty()) fs::remove_all(path, ignored);
}

absl::Status MakeWorkFolder(WorkFolder& work, const std::string& out, const std::string& tool) {
  if (!out.empty()) {
    work.path = out;
    work.keep = true;
  } else {
    work.path = fs::temp_directory_path() / fmt::format("mgd-{}-{}", tool, getpid());
  }
  if (absl::Status s = MakeFolder(work.path.string()); !s.ok()) {
    return absl::Status(s.code(), fmt::format("{}{}", out.empty() ? "" : "--out ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace mgd::cli
