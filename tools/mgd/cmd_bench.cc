// mgd bench: cold prepare time, end-to-end latency over many invokes (input
// upload and output download included), and the GPU time of each dispatch
// from timestamps, mapped back to the model's nodes.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <random>

#include "base/files.h"
#include "base/json_text.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/status_macros.h"
#include "tools/mgd/backend_choice.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5));
  return v[i];
}

struct Model {
  std::unique_ptr<Interpreter> interpreter;
  double prepare_ms = 0;
};

absl::StatusOr<Model> Load(const BenchOptions& options, Graph graph, double read_ms, Delegate* delegate) {
  const auto start = Clock::now();
  InterpreterOptions interpreter_options;
  if (delegate != nullptr) interpreter_options.delegates.push_back(delegate);
  interpreter_options.check_finite = options.run.check_finite;
  interpreter_options.max_delegated_partitions = options.run.max_partitions;
  interpreter_options.partition_by_cost = options.run.partition_by_cost;
  interpreter_options.max_in_flight = std::max(options.in_flight, 1);
  auto created = Interpreter::Create(std::move(graph), std::move(interpreter_options));
  if (!created.ok()) return WithModelPath(options.run.model, created.status());
  Model m{std::move(*created), read_ms + Ms(Clock::now() - start)};
  // Inputs from files, or uniform in [-1, 1] with a fixed seed.
  if (!options.run.inputs.empty() && options.run.inputs.size() != m.interpreter->num_inputs()) {
    return UsageError(fmt::format("{}: the model has {} input(s), but {} --input file(s) were given",
                                  options.run.model, m.interpreter->num_inputs(), options.run.inputs.size()));
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (size_t i = 0; i < m.interpreter->num_inputs(); ++i) {
    TensorRef& t = m.interpreter->input(i);
    if (!options.run.inputs.empty()) {
      MGD_RETURN_IF_ERROR(FeedInput(t, i, options.run.inputs[i]));
    } else if (t.type == DataType::kFloat32) {
      for (int64_t k = 0; k < t.elements(); ++k) t.as<float>()[k] = uniform(rng);
    }
  }
  return m;
}

// Chrome trace-event JSON (opens in Perfetto and chrome://tracing): complete
// events ("ph": "X") in microseconds since the bench began, one track (tid)
// for the CPU's invokes and one per GPU partition for its dispatches.
class Trace {
 public:
  explicit Trace(Clock::time_point origin) : origin_(origin) {}
  double Us(Clock::time_point t) const { return std::chrono::duration<double, std::micro>(t - origin_).count(); }
  void Span(const std::string& name, const char* category, int tid, double start_us, double dur_us,
            nlohmann::json args = nlohmann::json::object()) {
    events_.push_back({{"name", name}, {"cat", category}, {"ph", "X"}, {"pid", 1}, {"tid", tid}, {"ts", start_us},
                       {"dur", std::max(dur_us, 0.0)}, {"args", std::move(args)}});
  }
  void NameTrack(int tid, const std::string& name) {
    events_.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"name", name}}}});
    events_.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
  }
  absl::Status Write(const std::string& path, const std::string& process) {
    events_.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", process}}}});
    const absl::Status s =
        WriteFileAtomically(path, JsonText(nlohmann::json{{"traceEvents", events_}, {"displayTimeUnit", "ms"}}) + "\n");
    return s.ok() ? s : absl::Status(s.code(), fmt::format("--trace {}", s.message()));
  }

 private:
  Clock::time_point origin_;
  nlohmann::json events_ = nlohmann::json::array();
};

constexpr int kCpuTrack = 1;
constexpr int kFirstGpuTrack = 2;

// The process's CPU time so far, every thread's (a GL context thread's, a
// software GPU's own), in ms.
double ProcessCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// Wall time of each of `iterations` invokes after `warmup` ones, each also a
// span on the trace's CPU track, and the CPU time they took per invoke
// (what an active wait's polling costs, beside the latency it saves).
struct Timed {
  std::vector<double> ms;
  double cpu_ms_per_invoke = 0;
};
absl::StatusOr<Timed> Time(Interpreter& interpreter, int warmup, int iterations, Trace& trace) {
  Timed timed;
  std::vector<double>& ms = timed.ms;
  double cpu_start = 0;
  for (int i = 0; i < warmup + iterations; ++i) {
    if (i == warmup) cpu_start = ProcessCpuMs();
    const auto start = Clock::now();
    if (absl::Status s = interpreter.Invoke(); !s.ok()) return absl::InternalError(s.message());
    const auto end = Clock::now();
    if (i >= warmup) ms.push_back(Ms(end - start));
    trace.Span(i < warmup ? "invoke (warm-up)" : "invoke", "cpu", kCpuTrack, trace.Us(start), trace.Us(end) - trace.Us(start),
               {{"iteration", i - warmup}});
  }
  timed.cpu_ms_per_invoke = (ProcessCpuMs() - cpu_start) / iterations;
  return timed;
}

// `iterations` async invokes after `warmup` ones, at most `in_flight`
// pending (the interpreter's max_in_flight), on the inputs the interpreter
// holds: frames per second, each invoke's latency, and the process's CPU
// time per timed invoke (the waiting threads' included). The latency runs
// from when the invoke could start (its call, or the completion of the
// invoke `in_flight` before it, which freed its slot: InvokeAsync blocks
// until then) to its completion; from the call alone, back-to-back calls
// with one in flight would count each run twice.
struct Throughput {
  double frames_per_s = 0;
  std::vector<double> latency_ms;
  double cpu_ms_per_invoke = 0;
};
absl::StatusOr<Throughput> TimeInFlight(Interpreter& interpreter, int in_flight, int warmup, int iterations) {
  std::vector<InputBytes> inputs;
  for (size_t i = 0; i < interpreter.num_inputs(); ++i) inputs.push_back({interpreter.input(i).data, interpreter.input(i).bytes});
  // One set of output buffers per invoke in flight: set k % in_flight is
  // free again when invoke k may start.
  std::vector<std::vector<std::vector<uint8_t>>> sets(static_cast<size_t>(in_flight));
  for (auto& set : sets) {
    for (size_t k = 0; k < interpreter.num_outputs(); ++k) set.emplace_back(interpreter.output(k).bytes);
  }
  const int total = warmup + iterations;
  std::vector<Clock::time_point> called(static_cast<size_t>(total)), completed(static_cast<size_t>(total));
  std::vector<std::shared_ptr<InvokeEvent>> events;
  Clock::time_point first{};
  double cpu_start = 0;
  for (int i = 0; i < total; ++i) {
    if (i == warmup) {
      for (auto& e : events) e->Wait();  // the timed ones start on an idle GPU
      first = Clock::now();
      cpu_start = ProcessCpuMs();
    }
    std::vector<OutputBytes> outputs;
    for (auto& o : sets[static_cast<size_t>(i % in_flight)]) outputs.push_back({o.data(), o.size()});
    called[static_cast<size_t>(i)] = Clock::now();
    auto event = interpreter.InvokeAsync(inputs, std::move(outputs), [&completed, i](const absl::Status&) {
      completed[static_cast<size_t>(i)] = Clock::now();
    });
    if (!event.ok()) return absl::InternalError(event.status().message());
    events.push_back(*event);
  }
  for (auto& e : events) {
    e->Wait();
    if (!e->status().ok()) return absl::InternalError(e->status().message());
  }
  Throughput t;
  t.cpu_ms_per_invoke = (ProcessCpuMs() - cpu_start) / iterations;
  t.frames_per_s = iterations / (Ms(completed.back() - first) / 1000.0);
  for (int i = warmup; i < total; ++i) {
    Clock::time_point start = called[static_cast<size_t>(i)];
    if (i >= in_flight) start = std::max(start, completed[static_cast<size_t>(i - in_flight)]);
    t.latency_ms.push_back(Ms(completed[static_cast<size_t>(i)] - start));
  }
  return t;
}

std::string NodeNames(const Graph& graph, const std::vector<int>& nodes) {
  std::vector<std::string> names;
  for (int n : nodes) names.push_back(fmt::format("{}:{}", n, OpName(graph.nodes[static_cast<size_t>(n)].op)));
  return names.empty() ? "(input/output conversion)" : fmt::format("{}", fmt::join(names, " "));
}

}  // namespace

absl::Status Bench(const BenchOptions& given) {
  const auto read_start = Clock::now();
  MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(given.run.model));
  const double read_ms = Ms(Clock::now() - read_start);
  BenchOptions options = given;
  MGD_RETURN_IF_ERROR(FollowCompiledModel(graph, options.run));
  if (options.iterations < 1 || options.warmup < 0) return UsageError("--iterations must be >= 1 and --warmup >= 0");
  if (!options.vs.empty() && options.vs != "cpu") return UsageError(fmt::format("--vs {}: only 'cpu' is known", options.vs));
  MGD_ASSIGN_OR_RETURN(GpuDelegateOptions gpu_options, DelegateOptionsFrom(options.run));
  Profiler profiler;  // outlives the delegate
  gpu_options.observers.push_back(&profiler);
  MGD_ASSIGN_OR_RETURN(BackendChoice backend, ChooseBackend(options.run.backend, gpu_options));
  Trace trace(Clock::now());
  MGD_ASSIGN_OR_RETURN(Model model, Load(options, std::move(graph), read_ms, backend.delegate.get()));
  trace.NameTrack(kCpuTrack, "CPU: prepare and invokes");
  trace.Span("prepare (read, compile, upload weights)", "cpu", kCpuTrack, 0, model.prepare_ms * 1000);
  Interpreter& interpreter = *model.interpreter;
  MGD_ASSIGN_OR_RETURN(Timed timed, Time(interpreter, options.warmup, options.iterations, trace));
  const std::vector<double>& run_ms = timed.ms;

  // GPU times: the timestamped recordings, replayed separately so that the
  // latency above carries no query overhead.
  std::vector<double> gpu_total_ms;
  std::map<size_t, std::vector<double>> per_dispatch_ms;  // flat dispatch index -> samples
  std::vector<DispatchProfile> dispatches;
  if (backend.delegate) {
    backend.delegate->SetTimedRuns(true);
    const int samples = std::min(options.iterations, 50);
    for (int i = 0; i < samples + 2; ++i) {
      const auto start = Clock::now();
      if (absl::Status s = interpreter.Invoke(); !s.ok()) return absl::InternalError(s.message());
      const auto end = Clock::now();
      trace.Span("invoke (GPU timestamps on)", "cpu", kCpuTrack, trace.Us(start), trace.Us(end) - trace.Us(start));
      if (i < 2) continue;  // the first timed replays warm up
      double total = 0;
      size_t flat = 0;
      dispatches.clear();
      const auto profiles = profiler.Profiles();
      for (size_t p = 0; p < profiles.size(); ++p) {
        // The GPU's clock is not the CPU's: each partition's dispatches are
        // placed from the start of the invoke that ran them.
        for (const DispatchProfile& d : profiles[p]) {
          per_dispatch_ms[flat++].push_back(d.gpu_ns * 1e-6);
          total += d.gpu_ns * 1e-6;
          dispatches.push_back(d);
          nlohmann::json ops = nlohmann::json::array();
          for (int n : d.nodes) ops.push_back(fmt::format("{} {}", n, OpName(interpreter.graph().nodes[static_cast<size_t>(n)].op)));
          trace.Span(d.name, "gpu", kFirstGpuTrack + static_cast<int>(p), trace.Us(start) + d.start_ns / 1000, d.gpu_ns / 1000,
                     {{"model_nodes", ops}});
        }
      }
      gpu_total_ms.push_back(total);
    }
    for (size_t p = 0; p < interpreter.partitions().size(); ++p) {
      trace.NameTrack(kFirstGpuTrack + static_cast<int>(p), fmt::format("GPU ({}): partition {} dispatches", backend.backend, p));
    }
    backend.delegate->SetTimedRuns(false);
  }
  std::vector<double> cpu_ms;
  if (options.vs == "cpu") {
    const auto cpu_read_start = Clock::now();
    MGD_ASSIGN_OR_RETURN(Graph cpu_graph, ReadModelFile(options.run.model));
    MGD_ASSIGN_OR_RETURN(Model cpu, Load(options, std::move(cpu_graph), Ms(Clock::now() - cpu_read_start), nullptr));
    Trace unused(Clock::now());
    MGD_ASSIGN_OR_RETURN(Timed on_cpu, Time(*cpu.interpreter, std::min(options.warmup, 3), std::min(options.iterations, 10), unused));
    cpu_ms = std::move(on_cpu.ms);
  }
  std::optional<Throughput> in_flight;
  if (options.in_flight > 0) {
    MGD_ASSIGN_OR_RETURN(in_flight, TimeInFlight(interpreter, options.in_flight, options.warmup, options.iterations));
  }
  if (!options.trace.empty()) {
    MGD_RETURN_IF_ERROR(trace.Write(options.trace, fmt::format("mgd bench {} ({})", options.run.model, backend.backend)));
  }

  nlohmann::json per_op = nlohmann::json::array();
  for (size_t i = 0; i < dispatches.size(); ++i) {
    std::vector<std::string> ops;
    for (int n : dispatches[i].nodes) ops.push_back(OpName(interpreter.graph().nodes[static_cast<size_t>(n)].op));
    per_op.push_back({{"name", dispatches[i].name}, {"ops", ops}, {"nodes", dispatches[i].nodes},
                      {"gpu_ms", Percentile(per_dispatch_ms[i], 0.5)}});
  }
  const double p50 = Percentile(run_ms, 0.5);
  const GpuMemory memory = GpuMemoryOf(backend.delegate.get());
  // How the invokes waited for the GPU, as --wait resolved on this device.
  const bool polls =
      backend.delegate && gpu::PollTime(backend.delegate->options().wait, backend.delegate->device().info()).count() > 0;
  const std::string wait = !backend.delegate ? "none"
                                             : gpu::WaitModeName(polls ? gpu::WaitMode::kActive : gpu::WaitMode::kPassive);
  if (options.run.json) {
    nlohmann::json j = {
        {"backend", backend.backend},
        {"device", backend.device},
        {"precision", backend.delegate ? options.run.precision : "fp32"},
        {"fusion", !options.run.no_fusion},
        {"wait", wait},
        {"prepare_ms", model.prepare_ms},
        {"cache", CacheEvents(backend.delegate.get())},
        {"prepare_steps", PrepareSteps(backend.delegate.get())},
        {"run_ms",
         {{"min", Percentile(run_ms, 0)}, {"p50", p50}, {"p90", Percentile(run_ms, 0.9)}, {"max", Percentile(run_ms, 1)}}},
        {"cpu_ms_per_invoke", timed.cpu_ms_per_invoke},
        {"gpu_ms", {{"p50", backend.delegate ? nlohmann::json(Percentile(gpu_total_ms, 0.5)) : nlohmann::json(nullptr)}}},
        {"dispatches", dispatches.size()},
        {"partitions", interpreter.partitions().size()},
        {"activation_bytes", memory.activation_bytes},
        {"constant_bytes", memory.constant_bytes},
        {"per_op", per_op}};
    if (in_flight) {
      j["in_flight"] = {{"invokes", options.in_flight},
                        {"frames_per_s", in_flight->frames_per_s},
                        {"latency_ms", {{"p50", Percentile(in_flight->latency_ms, 0.5)}, {"p90", Percentile(in_flight->latency_ms, 0.9)}}},
                        {"cpu_ms_per_invoke", in_flight->cpu_ms_per_invoke},
                        {"one_at_a_time_frames_per_s", 1000.0 / p50}};
    }
    if (!cpu_ms.empty()) j["vs_cpu"] = {{"cpu_p50_ms", Percentile(cpu_ms, 0.5)}, {"speedup", Percentile(cpu_ms, 0.5) / p50}};
    std::printf("%s\n", JsonText(j).c_str());
    return absl::OkStatus();
  }
  fmt::print("model      {}\nbackend    {} ({}; {})\nprecision  {}{}\n", options.run.model, backend.backend,
             backend.device, backend.why, backend.delegate ? options.run.precision : "fp32",
             options.run.no_fusion ? " (fusion off)" : "");
  const bool warm = backend.delegate && !backend.delegate->cache_events().empty() &&
                    (backend.delegate->cache_events()[0] == "hit" || backend.delegate->cache_events()[0] == "compiled model: loaded");
  fmt::print("prepare    {:.1f} ms ({})\n", model.prepare_ms, warm ? "from the cache or compiled model" : "cold");
  fmt::print("run        min {:.3f}  p50 {:.3f}  p90 {:.3f}  max {:.3f} ms over {} runs (upload and download "
             "included{}); CPU {:.3f} ms per invoke\n",
             Percentile(run_ms, 0), p50, Percentile(run_ms, 0.9), Percentile(run_ms, 1), run_ms.size(),
             backend.delegate ? "; " + wait + " wait" : "", timed.cpu_ms_per_invoke);
  if (in_flight) {
    fmt::print("in flight  {} invokes: {:.1f} frames/s (one at a time: {:.1f}), latency p50 {:.3f} p90 {:.3f} ms; "
               "CPU {:.3f} ms per invoke\n",
               options.in_flight, in_flight->frames_per_s, 1000.0 / p50, Percentile(in_flight->latency_ms, 0.5),
               Percentile(in_flight->latency_ms, 0.9), in_flight->cpu_ms_per_invoke);
  }
  if (backend.delegate) {
    fmt::print("gpu        p50 {:.3f} ms in {} dispatches ({} partition(s))\n", Percentile(gpu_total_ms, 0.5),
               dispatches.size(), interpreter.partitions().size());
    std::vector<size_t> order(dispatches.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return Percentile(per_dispatch_ms[a], 0.5) > Percentile(per_dispatch_ms[b], 0.5);
    });
    fmt::print("slowest dispatches:\n");
    for (size_t k = 0; k < std::min<size_t>(10, order.size()); ++k) {
      const size_t i = order[k];
      fmt::print("  {:8.4f} ms  {}  [{}]\n", Percentile(per_dispatch_ms[i], 0.5), dispatches[i].name,
                 NodeNames(interpreter.graph(), dispatches[i].nodes));
    }
  }
  if (!cpu_ms.empty()) {
    fmt::print("cpu        p50 {:.3f} ms (reference kernels); GPU speed-up {:.2f}x\n", Percentile(cpu_ms, 0.5),
               Percentile(cpu_ms, 0.5) / p50);
  }
  return absl::OkStatus();
}

}  // namespace mgd::cli
