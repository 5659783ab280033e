#include "delegate/serialize.h"

#include "delegate/byte_io.h"
#include "shaders/parameters.h"  // kMaxParams

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

namespace mgd {
namespace {

bool IsIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

template <typename E>
bool InRange(uint8_t v, E last) {
  return v <= static_cast<uint8_t>(last);
}

}  // namespace

std::vector<uint8_t> SerializeCompiledModel(const CompiledModel& m) {
  ByteWriter w;
  w.Put<uint32_t>(kCompiledModelMagic);
  w.Put<uint32_t>(kCompiledModelVersion);
  w.Put<uint32_t>(static_cast<uint32_t>(m.buffers.size()));
  for (const CompiledBuffer& b : m.buffers) {
    w.Put<uint8_t>(static_cast<uint8_t>(b.role));
    w.Put<int32_t>(b.tensor);
    w.Put<uint64_t>(b.bytes);
    w.Put<int32_t>(b.constant);
    w.Put<int32_t>(b.first_use);
    w.Put<int32_t>(b.last_use);
    w.Put<int32_t>(b.object);
    w.Put<uint64_t>(b.offset);
    w.Array(std::array<int32_t, 4>{b.shape.batch, b.shape.height, b.shape.width, b.shape.channels});
  }
  w.Put<uint32_t>(static_cast<uint32_t>(m.constants.size()));
  for (const auto& c : m.constants) w.Bytes(c.data(), c.size());
  w.Put<uint32_t>(static_cast<uint32_t>(m.dispatches.size()));
  for (const CompiledDispatch& d : m.dispatches) {
    const shaders::ShaderCode& c = d.code;
    w.String(c.name);
    w.Array(c.workgroup);
    w.Put<uint32_t>(static_cast<uint32_t>(c.buffers.size()));
    for (const shaders::BufferDecl& b : c.buffers) {
      w.String(b.name);
      w.String(b.element_type);
      w.Put<uint8_t>(static_cast<uint8_t>(b.access));
      w.Put<uint8_t>(b.activation);
    }
    w.Put<uint32_t>(static_cast<uint32_t>(c.params.list.size()));
    for (const shaders::ShaderParam& p : c.params.list) {
      w.String(p.name);
      w.Put<uint8_t>(p.is_float);
      w.Put<uint32_t>(p.bits);
      w.String(p.member);
    }
    w.String(c.shared);
    w.String(c.body);
    w.Put<uint8_t>(c.half_storage);
    w.Put<uint8_t>(c.mediump);
    w.Put<uint8_t>(c.dont_unroll);
    w.Put<uint8_t>(c.int8_dot);
    w.Put<uint32_t>(static_cast<uint32_t>(d.bindings.size()));
    for (const CompiledBinding& b : d.bindings) {
      w.Put<int32_t>(b.buffer);
      w.Put<uint8_t>(b.write);
    }
    w.Array(d.groups);
    w.Put<uint32_t>(static_cast<uint32_t>(d.nodes.size()));
    for (int n : d.nodes) w.Put<int32_t>(n);
    w.Array(d.grid);
    w.String(d.key.op);
    w.Array(d.key.in);
    w.Array(d.key.out);
    w.Put<uint32_t>(static_cast<uint32_t>(d.key.weights.size()));
    for (int v : d.key.weights) w.Put<int32_t>(v);
    w.Put<uint8_t>(d.key.fp16);
    w.String(d.workgroup_source);
    w.Put<uint32_t>(static_cast<uint32_t>(d.spirv.size()));
    for (uint32_t word : d.spirv) w.Put<uint32_t>(word);
    w.Bytes(d.binary.data(), d.binary.size());
  }
  for (const std::vector<int>* list : {&m.inputs, &m.outputs}) {
    w.Put<uint32_t>(static_cast<uint32_t>(list->size()));
    for (int i : *list) w.Put<int32_t>(i);
  }
  w.Put<uint32_t>(static_cast<uint32_t>(m.memory_objects.size()));
  for (uint64_t b : m.memory_objects) w.Put<uint64_t>(b);
  w.Put<uint8_t>(static_cast<uint8_t>(m.memory_strategy));
  w.Put<uint8_t>(static_cast<uint8_t>(m.memory_problem));
  w.Bytes(m.pipeline_cache.data(), m.pipeline_cache.size());
  return w.Take();
}

namespace {

// `shared`, when given, holds `data`: constants then point into it.
absl::StatusOr<CompiledModel> Parse(const uint8_t* data, size_t size, const std::shared_ptr<const Bytes>& shared) {
  ByteReader r(data, size);
  if (r.Get<uint32_t>("magic") != kCompiledModelMagic) {
    return absl::InvalidArgumentError("not an mgd compiled model (bad magic)");
  }
  const uint32_t version = r.Get<uint32_t>("version");
  if (r.ok() && version != kCompiledModelVersion) {
    return absl::InvalidArgumentError(fmt::format("compiled model version {} (this mgd reads {})", version, kCompiledModelVersion));
  }
  CompiledModel m;
  m.buffers.resize(r.Count("buffers", 53));
  for (CompiledBuffer& b : m.buffers) {
    const uint8_t role = r.Get<uint8_t>("buffer.role");
    if (r.ok() && !InRange(role, BufferRole::kConstant)) r.Fail("buffer.role", fmt::format("{} is no role", role));
    b.role = static_cast<BufferRole>(role);
    b.tensor = r.Get<int32_t>("buffer.tensor");
    b.bytes = r.Get<uint64_t>("buffer.bytes");
    b.constant = r.Get<int32_t>("buffer.constant");
    b.first_use = r.Get<int32_t>("buffer.first_use");
    b.last_use = r.Get<int32_t>("buffer.last_use");
    b.object = r.Get<int32_t>("buffer.object");
    b.offset = r.Get<uint64_t>("buffer.offset");
    const auto s = r.Array<int32_t, 4>("buffer.shape");
    b.shape = {s[0], s[1], s[2], s[3]};
  }
  m.constants.resize(r.Count("constants", 8));
  for (ConstantBytes& c : m.constants) {
    if (shared == nullptr) {
      c = r.Bytes("constant");
      continue;
    }
    const auto [at, n] = r.View("constant");
    if (at != nullptr) c = ConstantBytes(shared, at, n);
  }
  m.dispatches.resize(r.Count("dispatches", 100));
  for (CompiledDispatch& d : m.dispatches) {
    shaders::ShaderCode& c = d.code;
    c.name = r.String("dispatch.name");
    c.workgroup = r.Array<uint32_t, 3>("dispatch.workgroup");
    c.buffers.resize(r.Count("dispatch.buffers", 18));
    for (shaders::BufferDecl& b : c.buffers) {
      b.name = r.String("buffer_decl.name");
      b.element_type = r.String("buffer_decl.element_type");
      const uint8_t access = r.Get<uint8_t>("buffer_decl.access");
      if (r.ok() && !InRange(access, shaders::BufferAccess::kReadWrite)) r.Fail("buffer_decl.access", "not an access");
      b.access = static_cast<shaders::BufferAccess>(access);
      b.activation = r.Get<uint8_t>("buffer_decl.activation") != 0;
    }
    c.params.list.resize(r.Count("dispatch.params", 13));
    for (shaders::ShaderParam& p : c.params.list) {
      p.name = r.String("param.name");
      p.is_float = r.Get<uint8_t>("param.is_float") != 0;
      p.bits = r.Get<uint32_t>("param.bits");
      p.member = r.String("param.member");
      // Both are spliced into the source: nothing but an identifier may pass.
      if (r.ok() && !IsIdentifier(p.name)) r.Fail("param.name", "not an identifier");
      if (r.ok() && !p.member.empty() && !IsIdentifier(p.member)) r.Fail("param.member", "not an identifier");
    }
    c.shared = r.String("dispatch.shared");
    c.body = r.String("dispatch.body");
    c.half_storage = r.Get<uint8_t>("dispatch.half_storage") != 0;
    c.mediump = r.Get<uint8_t>("dispatch.mediump") != 0;
    c.dont_unroll = r.Get<uint8_t>("dispatch.dont_unroll") != 0;
    c.int8_dot = r.Get<uint8_t>("dispatch.int8_dot") != 0;
    d.bindings.resize(r.Count("dispatch.bindings", 5));
    for (CompiledBinding& b : d.bindings) {
      b.buffer = r.Get<int32_t>("binding.buffer");
      b.write = r.Get<uint8_t>("binding.write") != 0;
      if (r.ok() && (b.buffer < 0 || static_cast<size_t>(b.buffer) >= m.buffers.size())) {
        r.Fail("binding.buffer", fmt::format("{} is not a buffer (there are {})", b.buffer, m.buffers.size()));
      }
    }
    d.groups = r.Array<uint32_t, 3>("dispatch.groups");
    d.nodes.resize(r.Count("dispatch.nodes", 4));
    for (int& n : d.nodes) n = r.Get<int32_t>("dispatch.node");
    d.grid = r.Array<uint32_t, 3>("dispatch.grid");
    d.key.op = r.String("key.op");
    d.key.in = r.Array<int, 3>("key.in");
    d.key.out = r.Array<int, 3>("key.out");
    d.key.weights.resize(r.Count("key.weights", 4));
    for (int& v : d.key.weights) v = r.Get<int32_t>("key.weight");
    d.key.fp16 = r.Get<uint8_t>("key.fp16") != 0;
    d.workgroup_source = r.String("dispatch.workgroup_source");
    d.spirv.resize(r.Count("dispatch.spirv", 4));
    for (uint32_t& word : d.spirv) word = r.Get<uint32_t>("dispatch.spirv");
    d.binary = r.Bytes("dispatch.binary");
    if (r.ok() && d.code.buffers.size() != d.bindings.size()) r.Fail("dispatch.bindings", "one binding per declared buffer expected");
    if (r.ok() && shaders::BlockMembers(d.code).size() > shaders::kMaxParams) {
      r.Fail("dispatch.params", "more parameter block members than every device takes");
    }
  }
  for (std::vector<int>* list : {&m.inputs, &m.outputs}) {
    list->resize(r.Count("inputs/outputs", 4));
    for (int& i : *list) {
      i = r.Get<int32_t>("inputs/outputs");
      if (r.ok() && (i < 0 || static_cast<size_t>(i) >= m.buffers.size())) r.Fail("inputs/outputs", fmt::format("{} is not a buffer", i));
    }
  }
  m.memory_objects.resize(r.Count("memory_objects", 8));
  for (uint64_t& b : m.memory_objects) b = r.Get<uint64_t>("memory_object");
  const uint8_t strategy = r.Get<uint8_t>("memory_strategy"), problem = r.Get<uint8_t>("memory_problem");
  if (r.ok() && !InRange(strategy, memory::Strategy::kBest)) r.Fail("memory_strategy", "not a strategy");
  if (r.ok() && !InRange(problem, memory::Problem::kOffsets)) r.Fail("memory_problem", "not a problem");
  m.memory_strategy = static_cast<memory::Strategy>(strategy);
  m.memory_problem = static_cast<memory::Problem>(problem);
  m.pipeline_cache = r.Bytes("pipeline_cache");
  // Cross-references, now that every table is read.
  for (size_t i = 0; r.ok() && i < m.buffers.size(); ++i) {
    const CompiledBuffer& b = m.buffers[i];
    if (b.role == BufferRole::kConstant && (b.constant < 0 || static_cast<size_t>(b.constant) >= m.constants.size())) {
      r.Fail("buffer.constant", fmt::format("buffer {} names constant {} of {}", i, b.constant, m.constants.size()));
    } else if (b.role == BufferRole::kConstant && m.constants[static_cast<size_t>(b.constant)].size() > b.bytes) {
      r.Fail("buffer.bytes", fmt::format("buffer {} is smaller than its constant", i));
    } else if (b.object >= 0 && (static_cast<size_t>(b.object) >= m.memory_objects.size() ||
                                 b.offset > m.memory_objects[static_cast<size_t>(b.object)] ||
                                 b.bytes > m.memory_objects[static_cast<size_t>(b.object)] - b.offset)) {
      r.Fail("buffer.object", fmt::format("buffer {} does not fit memory object {}", i, b.object));
    }
  }
  if (r.ok() && !r.at_end()) r.Fail("end", "bytes after the model");
  if (!r.ok()) return absl::InvalidArgumentError("compiled model: " + r.error());
  return m;
}

}  // namespace

absl::StatusOr<CompiledModel> ParseCompiledModel(const uint8_t* data, size_t size) { return Parse(data, size, nullptr); }

absl::StatusOr<CompiledModel> ParseCompiledModel(std::shared_ptr<const Bytes> bytes) {
  if (bytes == nullptr) return absl::InvalidArgumentError("compiled model: no bytes");
  return Parse(bytes->data(), bytes->size(), bytes);
}

}  // namespace mgd
