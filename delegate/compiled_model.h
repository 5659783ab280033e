// What a partition compiles to, as plain data: no GPU object in it, so that
// it can be inspected (mgd dump), planned (memory) and cached.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "layout/phwc4.h"
#include "model/graph.h"
#include "memory/strategy.h"
#include "tuning/workgroups.h"
#include "shaders/dialect.h"

namespace mgd {

enum class BufferRole {
  kActivation,  // a PHWC4 tensor inside the partition
  kUserInput,   // a float32 BHWC buffer the invoke uploads
  kUserOutput,  // a float32 BHWC buffer the invoke downloads
  kConstant,    // uploaded once at prepare (`constant` indexes constants)
};

struct CompiledBuffer {
  BufferRole role = BufferRole::kActivation;
  int tensor = -1;    // graph tensor (-1 for packed weights)
  size_t bytes = 0;
  int constant = -1;  // kConstant: index into CompiledModel::constants
  // Execution steps (dispatch indices) of the first and last use, for the
  // memory planner.
  int first_use = -1, last_use = -1;
  // kActivation, once planned: the bytes at `offset` of memory object
  // `object` (CompiledModel::memory_objects).
  int object = -1;
  uint64_t offset = 0;
  layout::Bhwc shape{};  // kActivation (PHWC4) and user buffers (BHWC)
};

struct CompiledBinding {
  int buffer = -1;  // index into CompiledModel::buffers
  bool write = false;
};

struct CompiledDispatch {
  shaders::ShaderCode code;
  std::vector<CompiledBinding> bindings;  // binding i of `code`
  std::array<uint32_t, 3> groups{1, 1, 1};
  std::vector<int> nodes;                 // model nodes it runs (fused ones included); empty: I/O conversion
  // Invocations per axis when any workgroup will do (the shader returns past
  // them): groups = ceil(grid / workgroup). All 0: the generator's workgroup
  // is part of its algorithm (shared memory) and stays.
  std::array<uint32_t, 3> grid{0, 0, 0};
  tuning::DispatchKey key;               // what the workgroup tables know it by
  std::string workgroup_source = "generator";  // tuning::SourceName of the choice, or "generator"
  // Vulkan: the program's SPIR-V once built (first dispatch of each program
  // only), so that a cached model skips GLSL compilation.
  std::vector<uint32_t> spirv;
  // gpu::Program::binary(), likewise: GL's program binary, Vulkan's shader
  // module identifier.
  std::vector<uint8_t> binary;
};

struct CompiledModel {
  std::vector<CompiledBuffer> buffers;
  std::vector<ConstantBytes> constants;
  std::vector<CompiledDispatch> dispatches;
  std::vector<int> inputs, outputs;  // user-side buffers, in the partition's order
  // The device buffers the activations live in (delegate/memory_plan.h), and
  // the plan that placed them.
  std::vector<uint64_t> memory_objects;
  memory::Strategy memory_strategy = memory::Strategy::kNaive;
  memory::Problem memory_problem = memory::Problem::kSharedObjects;
  // Vulkan: the device's pipeline cache data after creating this model's
  // pipelines, so that a cached model also skips the driver's compiler.
  std::vector<uint8_t> pipeline_cache;
};

}  // namespace mgd
