// mgd run: load, prepare, feed inputs, invoke once, write outputs.
#include <fmt/format.h>

#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/json_text.h"
#include "interpreter/interpreter.h"
#include "model/fp16.h"
#include "model/reader.h"
#include "passes/int8_as_float.h"
#include "model/status_macros.h"
#include "tools/mgd/backend_choice.h"
#include "tools/mgd/commands.h"
#include "tools/mgd/npy.h"
#include "tools/mgd/run_once.h"
#include "tools/mgd/tensor_dump.h"

namespace mgd::cli {
namespace {

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

struct Stats {
  float min = 0, max = 0;
  int64_t argmax = 0;
  double mean = 0;
};

// An output's values as numbers: floats as they are, an 8-bit tensor with
// one scale dequantized, other integers and bools as they are.
std::vector<float> RealValues(const Interpreter& interpreter, const TensorRef& t) {
  const std::optional<Quantization>& q = interpreter.graph().tensors[static_cast<size_t>(t.index)].quantization;
  const bool dequantize = q.has_value() && q->scale.size() == 1;
  std::vector<float> v(static_cast<size_t>(t.elements()));
  for (size_t i = 0; i < v.size(); ++i) {
    double x = 0;
    switch (t.type) {
      case DataType::kFloat32: x = t.as<float>()[i]; break;
      case DataType::kInt8: x = t.as<int8_t>()[i]; break;
      case DataType::kUInt8: x = t.as<uint8_t>()[i]; break;
      case DataType::kInt32: x = t.as<int32_t>()[i]; break;
      case DataType::kInt64: x = static_cast<double>(t.as<int64_t>()[i]); break;
      case DataType::kBool: x = t.as<bool>()[i] ? 1 : 0; break;
      case DataType::kFloat16: x = HalfToFloat(t.as<uint16_t>()[i]); break;
    }
    if (dequantize && t.type != DataType::kFloat32) x = (x - static_cast<double>(q->zero_point[0])) * q->scale[0];
    v[i] = static_cast<float>(x);
  }
  return v;
}

Stats Summarize(const float* v, int64_t n) {
  Stats s;
  if (n == 0) return s;
  s.min = s.max = v[0];
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    s.min = std::min(s.min, v[i]);
    if (v[i] > s.max) {
      s.max = v[i];
      s.argmax = i;
    }
    sum += v[i];
  }
  s.mean = sum / static_cast<double>(n);
  return s;
}

}  // namespace

absl::Status UsageError(const std::string& message) { return absl::InvalidArgumentError(message); }

// A .npy file of the input's dtype, or a raw file of its values.
absl::Status FeedInput(TensorRef& tensor, size_t index, const std::string& path) {
  MGD_ASSIGN_OR_RETURN(Array array, ReadArray(path, tensor.type));
  if (array.type != tensor.type) {
    return absl::InvalidArgumentError(fmt::format("{}: holds {} values, but input {} ('{}') is {}", path,
                                                  DataTypeName(array.type), index, tensor.name, DataTypeName(tensor.type)));
  }
  if (array.has_shape && array.shape != tensor.shape) {
    return absl::InvalidArgumentError(fmt::format("{}: shape {} does not match input {} ('{}') of shape {}", path,
                                                  ShapeToString(array.shape), index, tensor.name,
                                                  ShapeToString(tensor.shape)));
  }
  if (array.bytes.size() != tensor.bytes) {
    const size_t element = ElementSize(tensor.type);
    return absl::InvalidArgumentError(fmt::format("{}: holds {} {} values, but input {} ('{}') of shape {} needs {}",
                                                  path, array.bytes.size() / element, DataTypeName(tensor.type), index,
                                                  tensor.name, ShapeToString(tensor.shape), tensor.elements()));
  }
  if (tensor.bytes > 0) std::memcpy(tensor.data, array.bytes.data(), tensor.bytes);
  return absl::OkStatus();
}


std::string OpLabel(const Node& node) {
  if (const auto* custom = std::get_if<CustomAttributes>(&node.attributes)) return "CUSTOM:" + custom->name;
  return OpName(node.op);
}

std::string SafeFileName(const std::string& name) {
  std::string out;
  for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return out;
}

absl::Status WithModelPath(const std::string& model, const absl::Status& status) {
  return absl::Status(status.code(), fmt::format("{}: {}", model, status.message()));
}

absl::StatusOr<RunResult> RunOnce(const RunOptions& given) {
  RunResult r;
  const auto read_start = std::chrono::steady_clock::now();
  MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(given.model));
  r.read_ms = MsSince(read_start);
  r.options = given;
  const RunOptions& options = r.options;
  MGD_RETURN_IF_ERROR(FollowCompiledModel(graph, r.options));
  MGD_ASSIGN_OR_RETURN(GpuDelegateOptions gpu_options, DelegateOptionsFrom(options));
  r.tensors = std::make_unique<TensorKeeper>();
  if (!options.dump_tensors.empty()) gpu_options.observers.push_back(r.tensors.get());
  const auto device_start = std::chrono::steady_clock::now();
  MGD_ASSIGN_OR_RETURN(r.backend, ChooseBackend(options.backend, gpu_options));
  r.device_ms = MsSince(device_start);
  r.precision = r.backend.delegate ? options.precision : "fp32";
  const auto start = std::chrono::steady_clock::now();
  InterpreterOptions interpreter_options;
  if (r.backend.delegate != nullptr) interpreter_options.delegates.push_back(r.backend.delegate.get());
  interpreter_options.preserve_all_tensors = !options.dump_tensors.empty();
  interpreter_options.check_finite = options.check_finite;
  interpreter_options.max_delegated_partitions = options.max_partitions;
  interpreter_options.partition_by_cost = options.partition_by_cost;
  interpreter_options.measure_timing = true;
  auto created = Interpreter::Create(std::move(graph), std::move(interpreter_options));
  if (!created.ok()) return WithModelPath(options.model, created.status());
  r.interpreter = std::move(*created);
  Interpreter& interpreter = *r.interpreter;
  r.prepare_ms = r.read_ms + MsSince(start);

  if (options.inputs.size() != interpreter.num_inputs()) {
    std::vector<std::string> names;
    for (size_t i = 0; i < interpreter.num_inputs(); ++i) {
      const TensorRef& t = interpreter.input(i);
      names.push_back(fmt::format("'{}' {}", t.name, ShapeToString(t.shape)));
    }
    return UsageError(fmt::format("{}: the model has {} input(s) ({}), but {} --input file(s) were given", options.model,
                                  interpreter.num_inputs(), fmt::join(names, ", "), options.inputs.size()));
  }
  for (size_t i = 0; i < options.inputs.size(); ++i) {
    MGD_RETURN_IF_ERROR(FeedInput(interpreter.input(i), i, options.inputs[i]));
  }
  if (!options.output_dir.empty()) {
    if (absl::Status s = MakeFolder(options.output_dir); !s.ok()) {
      return absl::Status(s.code(), fmt::format("--output-dir {}", s.message()));
    }
  }

  const auto run_start = std::chrono::steady_clock::now();
  absl::Status invoked = interpreter.Invoke({.timeout = std::nullopt, .timing = &r.timing, .fences = {}});
  // A non-finite input (--check-finite) is bad input (exit 2); the rest is a
  // runtime failure.
  if (!invoked.ok()) return absl::IsInvalidArgument(invoked) && options.check_finite ? invoked : absl::InternalError(invoked.message());
  r.run_ms = MsSince(run_start);
  if (!options.dump_tensors.empty()) {
    MGD_RETURN_IF_ERROR(DumpTensors(interpreter, r.backend.delegate ? r.tensors.get() : nullptr, options.dump_tensors, r.backend.backend));
  }
  return r;
}

absl::Status Run(const RunOptions& given) {
  MGD_ASSIGN_OR_RETURN(RunResult r, RunOnce(given));
  const RunOptions& options = r.options;
  const BackendChoice& backend = r.backend;
  const std::unique_ptr<Interpreter>& interpreter = r.interpreter;
  const std::string& precision = r.precision;
  const double read_ms = r.read_ms, prepare_ms = r.prepare_ms, run_ms = r.run_ms;

  nlohmann::json outputs = nlohmann::json::array();
  std::vector<std::string> lines;
  for (size_t k = 0; k < interpreter->num_outputs(); ++k) {
    const TensorRef& t = interpreter->output(k);
    std::string file;
    if (!options.output_dir.empty()) {
      file = (std::filesystem::path(options.output_dir) / fmt::format("output_{}.npy", k)).string();
      absl::Status written = WriteNpy(file, t.shape, t.type, t.data, t.bytes);
      if (!written.ok()) return written;
    }
    // The summary of what the values mean: an 8-bit output's real values.
    const std::vector<float> values = RealValues(*interpreter, t);
    const Stats s = Summarize(values.data(), t.elements());
    outputs.push_back({{"name", t.name}, {"shape", t.shape}, {"file", file.empty() ? nlohmann::json(nullptr) : nlohmann::json(file)}});
    // Where the maximum is, as a multi-dimensional index: the best class of a
    // classifier, the best anchor of a detector.
    Shape at(t.shape.size());
    for (int64_t rest = s.argmax, d = static_cast<int64_t>(t.shape.size()) - 1; d >= 0; --d) {
      const int32_t dim = std::max(t.shape[static_cast<size_t>(d)], 1);
      at[static_cast<size_t>(d)] = static_cast<int32_t>(rest % dim);
      rest /= dim;
    }
    lines.push_back(fmt::format("  output {} '{}' {}: min {:.6g} max {:.6g} at {} mean {:.6g}{}", k, t.name,
                                ShapeToString(t.shape), s.min, s.max, ShapeToString(at), s.mean,
                                file.empty() ? "" : " -> " + file));
  }

  int delegated = 0, folded = 0;
  for (const NodePlacement& p : interpreter->placements()) {
    delegated += p.where == NodePlacement::Where::kDelegate;
    folded += p.where == NodePlacement::Where::kFolded;
  }
  // Each GPU dispatch's workgroup and where it came from.
  nlohmann::json dispatches = nlohmann::json::array();
  std::map<std::string, int> sources;
  size_t programs = 0;  // over all partitions
  if (backend.delegate != nullptr) {
    for (const auto& partition : backend.delegate->dispatch_infos()) {
      size_t partition_programs = 0;
      for (const GpuDelegate::DispatchInfo& d : partition) {
        dispatches.push_back({{"name", d.name}, {"workgroup", d.workgroup}, {"source", d.source}, {"program", programs + d.program}});
        ++sources[d.source];
        partition_programs = std::max(partition_programs, d.program + 1);
      }
      programs += partition_programs;
    }
  }
  // Where the GPU partitions' activations live.
  const GpuMemory memory = GpuMemoryOf(backend.delegate.get());
  std::vector<std::string> plans;
  if (backend.delegate != nullptr) {
    for (const GpuDelegate::MemoryUse& use : backend.delegate->memory_uses()) {
      plans.push_back(fmt::format("{}:{}", memory::StrategyName(use.strategy), memory::ProblemName(use.problem)));
    }
  }
  // How an int8 model's ops run: as float ops that round onto the int8
  // grids (the GPU's way, passes/int8_as_float.h), or in integer arithmetic
  // on the CPU; null for a float model.
  const char* int8 = interpreter->int8_as_float()                 ? "float"
                     : HasInt8Activations(interpreter->graph()) ? "integer"
                                                                  : nullptr;
  // How the GPU stores such a model's filters: "8-bit dot products",
  // "8-bit" or "float" (GpuDelegateOptions::int8_filters, int8_dot); null
  // where no GPU runs it as float.
  const char* int8_filters = !interpreter->int8_as_float() || backend.delegate == nullptr ? nullptr
                             : backend.delegate->int8_dot()                               ? "8-bit dot products"
                             : backend.delegate->int8_filters()                           ? "8-bit"
                                                                                          : "float";
  if (options.json) {
    nlohmann::json j = {{"backend", backend.backend},
                        {"device", backend.device},
                        {"precision", precision},
                        {"int8", int8 != nullptr ? nlohmann::json(int8) : nlohmann::json(nullptr)},
                        {"int8_filters", int8_filters != nullptr ? nlohmann::json(int8_filters) : nlohmann::json(nullptr)},
                        {"nodes", interpreter->graph().nodes.size()},
                        {"delegated_nodes", delegated},
                        {"partitions", interpreter->partitions().size()},
                        {"prepare_ms", prepare_ms},
                        {"read_ms", read_ms},
                        {"device_ms", r.device_ms},
                        {"run_ms", run_ms},
                        {"invoke_timing",
                         {{"total_ms", r.timing.total_ms},
                          {"in_delegates_ms", r.timing.in_delegates_ms},
                          {"gpu_ms", r.timing.device_ms ? nlohmann::json(*r.timing.device_ms) : nlohmann::json(nullptr)}}},
                        {"activation_bytes", memory.activation_bytes},
                        {"constant_bytes", memory.constant_bytes},
                        {"memory_plans", plans},
                        {"dispatches", dispatches},
                        {"programs", programs},
                        {"fp32_layers", backend.delegate ? backend.delegate->fp32_layers() : std::vector<std::string>{}},
                        {"cache", CacheEvents(backend.delegate.get())},
                        {"prepare_steps", PrepareSteps(backend.delegate.get())},
                        {"outputs", outputs}};
    std::printf("%s\n", JsonText(j).c_str());
    return absl::OkStatus();
  }
  fmt::print("model    {}\n", options.model);
  fmt::print("backend  {} ({}; {})\n", backend.backend, backend.device, backend.why);
  fmt::print("precision {}{}\n", precision, precision != options.precision ? " (the CPU path is fp32)" : "");
  if (int8 != nullptr) {
    fmt::print("int8     {}\n", interpreter->int8_as_float()
                                    ? fmt::format("as float ops, each result rounded onto its int8 grid; filters "
                                                  "stored {}",
                                                  int8_filters != nullptr ? int8_filters : "as floats")
                                    : std::string("integer kernels on the CPU"));
  }
  if (backend.delegate && !backend.delegate->fp32_layers().empty()) {
    fmt::print("fp32 layers {} (the accuracy guard)\n", fmt::join(backend.delegate->fp32_layers(), ", "));
  }
  fmt::print("nodes    {} ({} on the GPU in {} partition(s), {} folded at load, {} on the CPU)\n",
             interpreter->graph().nodes.size(), delegated, interpreter->partitions().size(), folded,
             interpreter->graph().nodes.size() - static_cast<size_t>(delegated + folded));
  if (!sources.empty()) {
    std::vector<std::string> counts;
    for (const auto& [source, n] : sources) counts.push_back(fmt::format("{} {}", n, source));
    fmt::print("workgroups {} dispatch(es): {}\n", dispatches.size(), fmt::join(counts, ", "));
  }
  if (!plans.empty()) {
    fmt::print("memory   {:.1f} KiB of activations ({}), {:.1f} KiB of constants\n",
               static_cast<double>(memory.activation_bytes) / 1024, fmt::join(plans, ", "),
               static_cast<double>(memory.constant_bytes) / 1024);
  }
  fmt::print("prepare  {:.1f} ms\nrun      {:.1f} ms\n", prepare_ms, run_ms);
  for (const std::string& line : lines) fmt::print("{}\n", line);
  return absl::OkStatus();
}

}  // namespace mgd::cli
