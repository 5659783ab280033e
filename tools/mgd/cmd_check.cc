// mgd check: where fp16 goes wrong. Runs the model on the GPU twice, in fp32
// and in fp16, keeping every tensor (as `mgd run --dump-tensors`: fusion off,
// so each layer's output is stored in the precision's type), and lists per
// layer how far fp16 is from fp32, how much of that the layer added itself
// (its error over its inputs'), and the first layer past the threshold.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/files.h"
#include "base/json_text.h"
#include "model/reader.h"
#include "model/status_macros.h"
#include "tools/mgd/commands.h"
#include "tools/mgd/run_once.h"
#include "tools/mgd/tensor_dump.h"

namespace mgd::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The error of storing a value in fp16 (half an ulp: 11 significant bits):
// the least error any fp16 tensor has, so what a layer's own error is
// measured against when its inputs have none.
constexpr double kFp16Rounding = 1.0 / 2048;

// A folder that is removed when done, unless it is the user's --out.
struct WorkFolder {
  fs::path path;
  bool keep = false;
  ~WorkFolder() {
    std::error_code ignored;
    if (!keep && !path.empty()) fs::remove_all(path, ignored);
  }
};

// LiteRT's generated input (../shared/tools/litert-reference, --range -1,1):
// x[i] = sin((i + 1000 k) * 0.01) for input k, so that `check` without
// --input sees the same numbers as a reference made without one.
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

double ErrorOf(const json& row) {
  return row.contains("relative_rms") && row["relative_rms"].is_number() ? row["relative_rms"].get<double>() : INFINITY;
}

}  // namespace

absl::Status Check(const CheckOptions& options) {
  if (options.backend == "cpu") {
    return UsageError("check compares the GPU's fp16 with its fp32: --backend auto, vulkan or gl");
  }
  WorkFolder work;
  if (!options.out.empty()) {
    work.path = options.out;
    work.keep = true;
  } else {
    work.path = fs::temp_directory_path() / fmt::format("mgd-check-{}", getpid());
  }
  if (absl::Status s = MakeFolder(work.path.string()); !s.ok()) return absl::Status(s.code(), fmt::format("--out {}", s.message()));

  RunOptions run;
  run.model = options.model;
  run.backend = options.backend;
  run.backend_given = run.precision_given = true;
  run.inputs = options.inputs;
  if (run.inputs.empty()) {
    MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(options.model));
    MGD_ASSIGN_OR_RETURN(run.inputs, GeneratedInputs(graph, work.path));
  }

  // Which tensors each node reads, and the graph's outputs, from the graph
  // as the interpreter holds it (the indices the dumps name).
  std::map<int, std::vector<int>> node_inputs;
  std::set<int> outputs;
  std::string backend, device;
  for (const char* precision : {"fp32", "fp16"}) {
    run.precision = precision;
    run.dump_tensors = (work.path / precision).string();
    MGD_ASSIGN_OR_RETURN(RunResult r, RunOnce(run));
    if (r.backend.delegate == nullptr) return absl::FailedPreconditionError("check needs a GPU (Vulkan or GLES): none was found");
    backend = r.backend.backend;
    device = r.backend.device;
    run.backend = backend;  // fp16 on the GPU fp32 ran on
    if (node_inputs.empty()) {  // the same graph both times
      const Graph& g = r.interpreter->graph();
      for (size_t n = 0; n < g.nodes.size(); ++n) node_inputs[static_cast<int>(n)] = g.nodes[n].inputs;
      outputs.insert(g.outputs.begin(), g.outputs.end());
    }
  }
  MGD_ASSIGN_OR_RETURN(json diff, DiffDumps((work.path / "fp16").string(), (work.path / "fp32").string()));
  json rows = diff["tensors"];
  std::map<int, double> error_of;  // by tensor
  for (const json& row : rows) {
    if (row.contains("tensor")) error_of[row["tensor"].get<int>()] = ErrorOf(row);
  }
  json first = nullptr, worst = nullptr, model_outputs = json::array();
  double worst_growth = 0;
  for (json& row : rows) {
    if (!row.contains("node")) continue;  // a model input
    double inputs_error = 0;
    for (int t : node_inputs[row["node"].get<int>()]) {
      if (auto it = error_of.find(t); it != error_of.end()) inputs_error = std::max(inputs_error, it->second);
    }
    const double growth = ErrorOf(row) / std::max(inputs_error, kFp16Rounding);
    row["growth"] = std::isfinite(growth) ? json(growth) : json("inf");
    if (first.is_null() && Diverges(row, options.threshold)) first = row;
    if (worst.is_null() || growth > worst_growth) {
      worst = row;
      worst_growth = growth;
    }
    if (outputs.count(row["tensor"].get<int>())) model_outputs.push_back(row);
  }
  if (options.json) {
    std::printf("%s\n", JsonText(json{{"model", options.model}, {"backend", backend}, {"device", device},
                                      {"threshold", options.threshold},
                                      {"input", options.inputs.empty() ? json("generated: sin(0.01 i)") : json(options.inputs)},
                                      {"tensors", rows}, {"outputs", model_outputs},
                                      {"first_past_threshold", first}, {"largest_growth", worst}})
                            .c_str());
    return absl::OkStatus();
  }
  auto number = [](const json& v) { return v.is_number() ? fmt::format("{:.3g}", v.get<double>()) : JsonText(v); };
  auto describe = [&](const json& r) {
    return fmt::format("node {} ({}) '{}': relative RMS {}, {}x its inputs' error", r["node"].get<int>(),
                       r["op"].get<std::string>(), r["name"].get<std::string>(), number(r["relative_rms"]), number(r["growth"]));
  };
  fmt::print("{} on {} ({}): fp16 against fp32, every tensor stored (fusion off); input: {}\n", options.model, backend,
             device, options.inputs.empty() ? "generated, sin(0.01 i)" : fmt::format("{}", fmt::join(options.inputs, ", ")));
  fmt::print("growth: a layer's error over the largest of its inputs' (at least fp16's rounding, {:.2g})\n\n", kFp16Rounding);
  fmt::print("{:>5}  {:<20} {:>10} {:>8}  {}\n", "node", "op", "rel. RMS", "growth", "tensor");
  for (const json& r : rows) {
    if (!r.contains("node")) continue;
    const bool is_first = !first.is_null() && r["name"] == first["name"];
    fmt::print("{:>5}  {:<20} {:>10} {:>8}  {}{}\n", r["node"].get<int>(), r["op"].get<std::string>(),
               r.contains("error") ? r["error"].get<std::string>() : number(r["relative_rms"]),
               r.contains("growth") ? number(r["growth"]) : "-", r["name"].get<std::string>(),
               is_first ? fmt::format("   <-- first past {:g}", options.threshold) : "");
  }
  fmt::print("\noutputs:\n");
  for (const json& r : model_outputs) fmt::print("  '{}': relative RMS {}\n", r["name"].get<std::string>(), number(r["relative_rms"]));
  fmt::print("{}\n", first.is_null() ? fmt::format("no layer is past {:g}", options.threshold)
                                     : fmt::format("first layer past {:g}: {}", options.threshold, describe(first)));
  if (!worst.is_null()) fmt::print("largest growth: {}\n", describe(worst));
  return absl::OkStatus();
}

}  // namespace mgd::cli
