// mgd dump: what the GPU delegate made of a model, as files a person (or a
// driver engineer) can read and reuse: every dispatch's GLSL in both dialects
// (each compiles by itself), its SPIR-V and disassembly, grid, workgroup and
// where it came from, bindings and where their buffers live in the memory
// plan, and the model nodes it runs; graph.dot (rendered to SVG when Graphviz
// is installed) of partitions, fused groups and CPU nodes; plan.json; and an
// index.md that summarises it all.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/json_text.h"
#include "backends/vulkan/glsl_compiler.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/status_macros.h"
#include "shaders/dialect.h"
#include "tools/mgd/backend_choice.h"
#include "tools/mgd/commands.h"

namespace mgd::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

absl::Status WriteFile(const fs::path& path, const void* data, size_t bytes) { return WriteFileAtomically(path.string(), data, bytes); }
absl::Status WriteText(const fs::path& path, const std::string& text) { return WriteFileAtomically(path.string(), text); }

const char* RoleName(BufferRole role) {
  switch (role) {
    case BufferRole::kActivation: return "activation";
    case BufferRole::kUserInput: return "user_input";
    case BufferRole::kUserOutput: return "user_output";
    case BufferRole::kConstant: return "constant";
  }
  return "?";
}

std::string Dot(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out;
}

std::string Wg(const std::array<uint32_t, 3>& w) { return fmt::format("{}x{}x{}", w[0], w[1], w[2]); }

}  // namespace

absl::Status Dump(const DumpOptions& options) {
  RunOptions run;
  run.precision = options.precision;
  run.no_fusion = options.no_fusion;
  run.share_programs = options.share_programs;
  MGD_ASSIGN_OR_RETURN(GpuDelegateOptions gpu_options, DelegateOptionsFrom(run));
  CompiledModelKeeper kept;  // outlives the delegate
  gpu_options.observers.push_back(&kept);
  if (options.backend == "cpu") return UsageError("--backend cpu: the CPU path has no shaders to dump");
  MGD_ASSIGN_OR_RETURN(BackendChoice backend, ChooseBackend(options.backend, gpu_options));
  if (backend.delegate == nullptr) return absl::FailedPreconditionError("no GPU found: nothing to dump");
  MGD_ASSIGN_OR_RETURN(Graph model, ReadModelFile(options.model));
  InterpreterOptions interpreter_options;
  interpreter_options.delegates.push_back(backend.delegate.get());
  auto created = Interpreter::Create(std::move(model), std::move(interpreter_options));
  if (!created.ok()) return WithModelPath(options.model, created.status());
  const Interpreter& interpreter = **created;
  const Graph& g = interpreter.graph();
  const std::vector<CompiledModel>& compiled = kept.models();

  const fs::path out(options.out), shaders_dir = fs::path(options.out) / "dispatches";
  if (absl::Status s = MakeFolder(shaders_dir.string()); !s.ok()) {
    return absl::Status(s.code(), fmt::format("--out {}", s.message()));
  }
  auto tensor_name = [&](int t) { return t >= 0 ? g.tensors[static_cast<size_t>(t)].name : std::string("(weights)"); };

  std::string dispatch_rows, buffer_rows;
  json plan = json::array();
  std::map<int, std::pair<size_t, size_t>> node_dispatch;  // node -> (partition, dispatch)
  size_t total = 0;
  for (size_t p = 0; p < compiled.size(); ++p) {
    const CompiledModel& m = compiled[p];
    for (size_t i = 0; i < m.dispatches.size(); ++i, ++total) {
      const CompiledDispatch& d = m.dispatches[i];
      for (int n : d.nodes) node_dispatch[n] = {p, i};
      const std::string base = fmt::format("p{}_{:03}_{}", p, i, SafeFileName(d.code.name));
      const std::string vulkan = shaders::Emit(shaders::Dialect::kVulkan, d.code);
      MGD_RETURN_IF_ERROR(WriteText(shaders_dir / (base + ".vulkan.comp"), vulkan));
      MGD_RETURN_IF_ERROR(WriteText(shaders_dir / (base + ".gl.comp"), shaders::Emit(shaders::Dialect::kGles, d.code)));
      auto spirv = gpu::vulkan::CompileGlsl(d.code.name, vulkan, /*optimize=*/false);
      if (!spirv.ok()) return spirv.status();
      MGD_RETURN_IF_ERROR(WriteFile(shaders_dir / (base + ".spv"), spirv->words.data(), spirv->words.size() * 4));
      MGD_RETURN_IF_ERROR(WriteText(shaders_dir / (base + ".spvasm"), gpu::vulkan::DisassembleSpirv(spirv->words)));
      json bindings = json::array();
      std::vector<std::string> binding_text;
      for (size_t b = 0; b < d.bindings.size(); ++b) {
        const CompiledBuffer& buf = m.buffers[static_cast<size_t>(d.bindings[b].buffer)];
        json j = {{"binding", b}, {"buffer", d.bindings[b].buffer}, {"access", d.bindings[b].write ? "write" : "read"},
                  {"role", RoleName(buf.role)}, {"tensor", tensor_name(buf.tensor)}, {"bytes", buf.bytes}};
        if (buf.object >= 0) {
          j["memory_object"] = buf.object;
          j["offset"] = buf.offset;
        }
        bindings.push_back(j);
        binding_text.push_back(fmt::format("{}{}{}", d.bindings[b].write ? "w:" : "", buf.tensor >= 0 ? tensor_name(buf.tensor) : RoleName(buf.role),
                                           buf.object >= 0 ? fmt::format(" @obj{}+{}", buf.object, buf.offset) : ""));
      }
      json nodes = json::array();
      std::vector<std::string> node_text;
      for (int n : d.nodes) {
        const Node& node = g.nodes[static_cast<size_t>(n)];
        nodes.push_back({{"index", n}, {"op", OpLabel(node)}, {"outputs", [&] {
                           json o = json::array();
                           for (int t : node.outputs) o.push_back(tensor_name(t));
                           return o;
                         }()}});
        node_text.push_back(fmt::format("{} {}", n, OpLabel(node)));
      }
      const json info = {{"name", d.code.name},
                         {"partition", p},
                         {"index", i},
                         {"workgroup", d.code.workgroup},
                         {"workgroup_source", d.workgroup_source},
                         {"groups", d.groups},
                         {"invocation_grid", d.grid},
                         {"key", d.key.ToString()},
                         {"bindings", bindings},
                         {"nodes", nodes},
                         {"files", {base + ".vulkan.comp", base + ".gl.comp", base + ".spv", base + ".spvasm"}}};
      MGD_RETURN_IF_ERROR(WriteText(shaders_dir / (base + ".json"), JsonText(info, 2) + "\n"));
      dispatch_rows += fmt::format("| {} | [{}](dispatches/{}.vulkan.comp) | {} | {} ({}) | {} | {} |\n", total, d.code.name, base,
                                   node_text.empty() ? "I/O conversion" : fmt::format("{}", fmt::join(node_text, ", ")),
                                   Wg(d.code.workgroup), d.workgroup_source, Wg(d.groups), fmt::join(binding_text, ", "));
    }
    json buffers = json::array();
    for (size_t b = 0; b < m.buffers.size(); ++b) {
      const CompiledBuffer& buf = m.buffers[b];
      json j = {{"buffer", b}, {"role", RoleName(buf.role)}, {"tensor", tensor_name(buf.tensor)}, {"bytes", buf.bytes},
                {"first_use", buf.first_use}, {"last_use", buf.last_use}};
      if (buf.object >= 0) {
        j["memory_object"] = buf.object;
        j["offset"] = buf.offset;
      }
      buffers.push_back(j);
      buffer_rows += fmt::format("| {} | {} | {} | {} | {} | {} |\n", p, b, RoleName(buf.role), tensor_name(buf.tensor), buf.bytes,
                                 buf.object >= 0 ? fmt::format("object {} at {}", buf.object, buf.offset) : "own buffer");
    }
    plan.push_back({{"partition", p},
                    {"strategy", memory::StrategyName(m.memory_strategy)},
                    {"problem", memory::ProblemName(m.memory_problem)},
                    {"memory_objects", m.memory_objects},
                    {"buffers", buffers}});
  }
  MGD_RETURN_IF_ERROR(WriteText(out / "plan.json", JsonText(plan, 2) + "\n"));

  // graph.dot: partitions and their dispatches as clusters, CPU nodes red,
  // nodes folded at load grey, tensors as edges.
  std::string dot = "digraph mgd {\n  rankdir=TB;\n  node [shape=box, fontsize=10, style=filled, fillcolor=white];\n";
  std::string cpu_rows;
  std::map<std::pair<size_t, size_t>, std::vector<int>> clusters;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const NodePlacement& place = interpreter.placements()[n];
    const std::string label = fmt::format("{} {}", n, Dot(OpLabel(g.nodes[n])));
    if (auto it = node_dispatch.find(static_cast<int>(n)); it != node_dispatch.end() && place.where == NodePlacement::Where::kDelegate) {
      clusters[it->second].push_back(static_cast<int>(n));
      dot += fmt::format("  n{} [label=\"{}\"];\n", n, label);
    } else if (place.where == NodePlacement::Where::kFolded) {
      dot += fmt::format("  n{} [label=\"{}\\nfolded at load\", fillcolor=\"#dddddd\"];\n", n, label);
    } else {
      dot += fmt::format("  n{} [label=\"{}\\non the CPU\", fillcolor=\"#ffcccc\"];\n", n, label);
      if (place.where == NodePlacement::Where::kCpu) {
        cpu_rows += fmt::format("| {} | {} | {} |\n", n, OpLabel(g.nodes[n]), place.reason.empty() ? "-" : place.reason);
      }
    }
  }
  std::map<size_t, std::string> partition_body;
  for (const auto& [where, nodes] : clusters) {
    std::string inner;
    for (int n : nodes) inner += fmt::format(" n{};", n);
    partition_body[where.first] += fmt::format("    subgraph cluster_p{}_d{} {{ label=\"dispatch {}: {}\"; color=\"#4477aa\";{} }}\n", where.first,
                                               where.second, where.second, Dot(compiled[where.first].dispatches[where.second].code.name), inner);
  }
  for (const auto& [p, body] : partition_body) {
    dot += fmt::format("  subgraph cluster_p{} {{\n    label=\"GPU partition {} ({})\"; style=rounded; color=\"#2255cc\";\n{}  }}\n", p, p,
                       backend.backend, body);
  }
  std::map<int, int> producer;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int t : g.nodes[n].outputs) producer[t] = static_cast<int>(n);
  }
  for (int t : g.inputs) dot += fmt::format("  t{} [shape=ellipse, label=\"input {}\"];\n", t, Dot(tensor_name(t)));
  for (int t : g.outputs) dot += fmt::format("  o{} [shape=ellipse, label=\"output {}\"];\n", t, Dot(tensor_name(t)));
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int t : g.nodes[n].inputs) {
      if (t < 0 || g.tensors[static_cast<size_t>(t)].is_constant) continue;
      if (auto it = producer.find(t); it != producer.end()) {
        dot += fmt::format("  n{} -> n{};\n", it->second, n);
      } else {
        dot += fmt::format("  t{} -> n{};\n", t, n);
      }
    }
  }
  for (int t : g.outputs) {
    if (auto it = producer.find(t); it != producer.end()) dot += fmt::format("  n{} -> o{};\n", it->second, t);
  }
  dot += "}\n";
  MGD_RETURN_IF_ERROR(WriteText(out / "graph.dot", dot));
  std::string svg_note = "Graphviz is not installed: `dot -Tsvg graph.dot -o graph.svg` renders it.";
  if (std::system("command -v dot >/dev/null 2>&1") == 0) {
    const std::string command = fmt::format("dot -Tsvg '{}' -o '{}'", (out / "graph.dot").string(), (out / "graph.svg").string());
    svg_note = std::system(command.c_str()) == 0 ? "[graph.svg](graph.svg)" : "rendering graph.dot with Graphviz failed";
  }

  size_t delegated = 0, folded = 0;
  for (const NodePlacement& p : interpreter.placements()) {
    delegated += p.where == NodePlacement::Where::kDelegate;
    folded += p.where == NodePlacement::Where::kFolded;
  }
  std::string index = fmt::format("# mgd dump: {}\n\n", options.model);
  index += fmt::format("Backend {} ({}), precision {}, fusion {}. {} nodes: {} on the GPU in {} partition(s) and {} dispatch(es), "
                       "{} folded at load, {} on the CPU.\n\n",
                       backend.backend, backend.device, options.precision, options.no_fusion ? "off" : "on", g.nodes.size(), delegated,
                       compiled.size(), total, folded, g.nodes.size() - delegated - folded);
  index += fmt::format("Graph: {} (partitions, fused dispatches, CPU nodes). Memory plan: [plan.json](plan.json).\n\n", svg_note);
  index += "Each dispatch's files are in `dispatches/`: `.vulkan.comp` and `.gl.comp` (complete GLSL: "
           "`glslangValidator -V X.vulkan.comp`, `glslangValidator X.gl.comp`), `.spv` and `.spvasm` (SPIR-V and its "
           "disassembly), `.json` (grid, workgroup and its source, bindings, nodes).\n\n";
  index += "## CPU fallbacks\n\n";
  index += cpu_rows.empty() ? "None: every node runs on the GPU or was folded at load.\n\n"
                            : "| node | op | why it stays on the CPU |\n|---:|---|---|\n" + cpu_rows + "\n";
  index += "## Dispatches\n\n| # | shader | model nodes | workgroup (source) | groups | bindings (w: written, @object+offset) |\n"
           "|---:|---|---|---|---|---|\n" + dispatch_rows + "\n";
  index += "## Buffers\n\n| partition | # | role | tensor | bytes | where |\n|---:|---:|---|---|---:|---|\n" + buffer_rows;
  MGD_RETURN_IF_ERROR(WriteText(out / "index.md", index));
  fmt::print("{} dispatch(es) of {} partition(s) and {} CPU node(s) written to {} (index.md)\n", total, compiled.size(),
             g.nodes.size() - delegated - folded, options.out);
  return absl::OkStatus();
}

}  // namespace mgd::cli
