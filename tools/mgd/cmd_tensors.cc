// Seeing intermediate tensors: `mgd run --dump-tensors DIR` writes every
// tensor the model computes as DIR/<name>.npy plus DIR/tensors.json (the
// execution order), from the GPU (fusion off and no memory reuse, so that
// each tensor exists) or from the CPU reference kernels; `mgd compare A B`
// lists them in order with their errors and points at the first divergence.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/json_text.h"
#include "model/status_macros.h"
#include "tools/mgd/commands.h"
#include "tools/mgd/npy.h"
#include "tools/mgd/tensor_dump.h"

namespace mgd::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A file name from a tensor name ("model/conv2d;bias" -> "model_conv2d_bias.npy");
// names cut to fit file systems, or equal once sanitized, get the tensor index.
std::string FileName(const std::string& name, int index, std::set<std::string>& used) {
  constexpr size_t kMaxStem = 100;
  std::string stem = SafeFileName(name);
  const bool cut = stem.size() > kMaxStem;
  if (cut) stem.resize(kMaxStem);
  if (stem.empty() || cut || used.count(stem)) stem += fmt::format("__t{}", index);
  used.insert(stem);
  return stem + ".npy";
}

absl::StatusOr<json> ReadIndex(const std::string& dir) {
  const fs::path path = fs::path(dir) / "tensors.json";
  auto text = ReadTextFile(path.string());
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        fmt::format("{}: is it a folder written by mgd run --dump-tensors?", text.status().message()));
  }
  try {
    json j = json::parse(*text);
    if (!j.is_object() || !j.contains("tensors") || !j["tensors"].is_array()) throw std::runtime_error("no \"tensors\" list");
    if (j.contains("backend") && !j["backend"].is_string()) throw std::runtime_error("\"backend\" is not a string");
    for (const json& t : j["tensors"]) {
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || !t.contains("file") || !t["file"].is_string() ||
          (t.contains("op") && !t["op"].is_string())) {
        throw std::runtime_error("a tensor without a string \"name\" and \"file\": " + JsonText(t));
      }
    }
    return j;
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(fmt::format("{}: {}", path.string(), e.what()));
  }
}

}  // namespace

absl::Status DumpTensors(const Interpreter& interpreter, const TensorKeeper* gpu_tensors, const std::string& dir,
                         const std::string& backend) {
  if (absl::Status s = MakeFolder(dir); !s.ok()) return absl::Status(s.code(), fmt::format("--dump-tensors {}", s.message()));
  std::map<int, std::vector<float>> gpu;
  if (gpu_tensors != nullptr) {
    MGD_ASSIGN_OR_RETURN(gpu, gpu_tensors->ReadActivations());
  }
  const Graph& g = interpreter.graph();
  std::set<int> held;  // tensors the interpreter holds: CPU kernels' and partitions' edges, graph inputs
  for (int t : g.inputs) held.insert(t);
  for (const Partition& p : interpreter.partitions()) held.insert(p.outputs.begin(), p.outputs.end());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (interpreter.placements()[n].where == NodePlacement::Where::kCpu) held.insert(g.nodes[n].outputs.begin(), g.nodes[n].outputs.end());
  }
  json tensors = json::array();
  std::set<std::string> used;
  auto write = [&](int t, int node) -> absl::Status {
    const TensorRef& ref = interpreter.tensor(t);
    if (ref.type != DataType::kFloat32) return absl::OkStatus();
    const float* data = nullptr;
    if (auto it = gpu.find(t); it != gpu.end()) {
      data = it->second.data();
    } else if (held.count(t) && ref.data != nullptr) {
      data = ref.as<float>();
    } else {
      return absl::OkStatus();  // lives only inside a partition that kept no copy
    }
    const std::string file = FileName(ref.name, t, used);
    MGD_RETURN_IF_ERROR(WriteNpy((fs::path(dir) / file).string(), ref.shape, data, static_cast<size_t>(ref.elements())));
    json entry = {{"name", ref.name}, {"file", file}, {"shape", ref.shape}, {"tensor", t}};
    if (node >= 0) {
      entry["node"] = node;
      entry["op"] = OpName(g.nodes[static_cast<size_t>(node)].op);
    }
    tensors.push_back(entry);
    return absl::OkStatus();
  };
  for (int t : g.inputs) MGD_RETURN_IF_ERROR(write(t, -1));
  for (int n : interpreter.ExecutionOrder()) {
    for (int t : g.nodes[static_cast<size_t>(n)].outputs) MGD_RETURN_IF_ERROR(write(t, n));
  }
  const absl::Status s = WriteFileAtomically((fs::path(dir) / "tensors.json").string(),
                                             JsonText(json{{"backend", backend}, {"tensors", tensors}}, 1) + "\n");
  return s.ok() ? s : absl::Status(s.code(), fmt::format("--dump-tensors {}", s.message()));
}

absl::StatusOr<json> DiffDumps(const std::string& dir_a, const std::string& dir_b) {
  MGD_ASSIGN_OR_RETURN(json a, ReadIndex(dir_a));
  MGD_ASSIGN_OR_RETURN(json b, ReadIndex(dir_b));
  std::map<std::string, json> in_b;
  for (const json& t : b["tensors"]) in_b[t["name"].get<std::string>()] = t;
  json rows = json::array();
  for (const json& t : a["tensors"]) {
    const std::string name = t["name"];
    auto other = in_b.find(name);
    if (other == in_b.end()) continue;
    MGD_ASSIGN_OR_RETURN(FloatArray x, ReadFloatArray((fs::path(dir_a) / t["file"].get<std::string>()).string()));
    MGD_ASSIGN_OR_RETURN(FloatArray y, ReadFloatArray((fs::path(dir_b) / other->second["file"].get<std::string>()).string()));
    json row = {{"name", name}, {"shape", t["shape"]}, {"op", t.value("op", "input")}};
    if (t.contains("node")) row["node"] = t["node"];
    if (t.contains("tensor")) row["tensor"] = t["tensor"];
    if (x.values.size() != y.values.size()) {
      row["error"] = fmt::format("{} values vs {}", x.values.size(), y.values.size());
      rows.push_back(row);
      continue;
    }
    double max_abs = 0, diff2 = 0, ref2 = 0;
    bool finite = true;
    for (size_t i = 0; i < x.values.size(); ++i) {
      const double d = static_cast<double>(x.values[i]) - y.values[i];
      finite = finite && std::isfinite(d);
      max_abs = std::max(max_abs, std::abs(d));
      diff2 += d * d;
      ref2 += static_cast<double>(y.values[i]) * y.values[i];
    }
    const double rms = ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? INFINITY : 0.0);
    row["max_abs_error"] = finite ? json(max_abs) : json("nan");
    row["relative_rms"] = std::isfinite(rms) ? json(rms) : json("inf");
    rows.push_back(row);
  }
  if (rows.empty()) return absl::InvalidArgumentError(fmt::format("{} and {} have no tensor in common", dir_a, dir_b));
  return json{{"a_backend", a.value("backend", "?")}, {"b_backend", b.value("backend", "?")}, {"tensors", rows}};
}

bool Diverges(const json& row, double threshold) {
  return row.contains("error") || !row["max_abs_error"].is_number() || !row["relative_rms"].is_number() ||
         !(row["relative_rms"].get<double>() <= threshold);
}

absl::Status Compare(const CompareOptions& options) {
  MGD_ASSIGN_OR_RETURN(json diff, DiffDumps(options.a, options.b));
  const json& rows = diff["tensors"];
  std::string first;
  for (const json& row : rows) {
    if (Diverges(row, options.threshold)) {
      first = row["name"];
      break;
    }
  }
  if (options.json) {
    std::printf("%s\n", JsonText(json{{"a", options.a}, {"b", options.b}, {"threshold", options.threshold}, {"tensors", rows},
                            {"first_divergent", first.empty() ? json(nullptr) : json(first)}}).c_str());
    return absl::OkStatus();
  }
  fmt::print("{} ({}) against {} ({}), {} tensors in execution order; divergent: relative RMS > {:g}\n\n", options.a,
             diff["a_backend"].get<std::string>(), options.b, diff["b_backend"].get<std::string>(), rows.size(), options.threshold);
  fmt::print("{:>4}  {:<24} {:>12} {:>12}  {}\n", "#", "op", "max |a-b|", "rel. RMS", "tensor");
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& r = rows[i];
    auto number = [](const json& v) { return v.is_number() ? fmt::format("{:.3g}", v.get<double>()) : JsonText(v); };
    fmt::print("{:>4}  {:<24} {:>12} {:>12}  {}{}\n", i, r["op"].get<std::string>(),
               r.contains("error") ? "-" : number(r["max_abs_error"]), r.contains("error") ? r["error"].get<std::string>() : number(r["relative_rms"]),
               r["name"].get<std::string>(), r["name"] == first ? "   <-- first divergence" : "");
  }
  fmt::print("\n{}\n", first.empty() ? "no tensor diverges" : fmt::format("first divergent tensor: {}", first));
  return absl::OkStatus();
}

}  // namespace mgd::cli
