#include "tuning/workgroups.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <type_traits>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/json_text.h"

namespace mgd::tuning {
namespace {

using nlohmann::json;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return needle.empty() || Lower(haystack).find(Lower(needle)) != std::string::npos;
}

// "550.54.15" >= "550"? Compares the numbers in order; missing ones are 0.
bool VersionAtLeast(const std::string& version, const std::string& minimum) {
  auto numbers = [](const std::string& s) {
    std::vector<long> v;
    long n = -1;
    for (char c : s) {
      if (std::isdigit(static_cast<unsigned char>(c))) {
        n = (n < 0 ? 0 : n * 10) + (c - '0');
      } else if (n >= 0) {
        v.push_back(n);
        n = -1;
        if (c != '.') break;  // "Mesa 22.3.6 (LLVM 15)": the first dotted run
      }
    }
    if (n >= 0) v.push_back(n);
    return v;
  };
  const std::vector<long> a = numbers(version), b = numbers(minimum);
  for (size_t i = 0; i < b.size(); ++i) {
    const long x = i < a.size() ? a[i] : 0;
    if (x != b[i]) return x > b[i];
  }
  return true;
}

absl::Status Bad(const std::string& source, const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(fmt::format("{}: {}: {}", source, where, what));
}

// Optional string field `key` of object `j` into `out` (left as it is where
// absent); json::value would throw on another type.
absl::Status OptionalString(const json& j, const char* key, const std::string& source, const std::string& where,
                            std::string& out) {
  if (!j.contains(key)) return absl::OkStatus();
  if (!j[key].is_string()) return Bad(source, where, "expected a string");
  out = j[key].get<std::string>();
  return absl::OkStatus();
}

absl::StatusOr<std::array<int, 3>> Extent(const json& j, const std::string& source, const std::string& where) {
  if (!j.is_array() || j.size() != 3) return Bad(source, where, "expected [width, height, slices]");
  std::array<int, 3> e{};
  for (size_t i = 0; i < 3; ++i) {
    if (!j[i].is_number_integer() || j[i].get<int64_t>() < 1 || j[i].get<int64_t>() > (1 << 24)) {
      return Bad(source, where, fmt::format("{} is not a positive extent", JsonText(j[i])));
    }
    e[i] = j[i].get<int>();
  }
  return e;
}

absl::StatusOr<Entry> ParseEntry(const json& j, const std::string& source, const std::string& where) {
  if (!j.is_object()) return Bad(source, where, "expected an object");
  Entry e;
  if (!j.contains("op") || !j["op"].is_string() || j["op"].get<std::string>().empty()) {
    return Bad(source, where + ".op", "missing or not a string");
  }
  e.key.op = j["op"].get<std::string>();
  const json& precision = j.contains("precision") ? j["precision"] : json();
  if (precision != "fp32" && precision != "fp16") return Bad(source, where + ".precision", "expected \"fp32\" or \"fp16\"");
  e.key.fp16 = precision == "fp16";
  if (j.contains("shape")) {
    if (j["shape"] != "any") return Bad(source, where + ".shape", "the only value is \"any\" (an op rule)");
    e.any_shape = true;
  } else {
    for (const char* field : {"in", "out"}) {
      if (!j.contains(field)) return Bad(source, where, fmt::format("missing \"{}\" (or \"shape\": \"any\")", field));
      auto extent = Extent(j[field], source, where + "." + field);
      if (!extent.ok()) return extent.status();
      (std::string(field) == "in" ? e.key.in : e.key.out) = *extent;
    }
    if (j.contains("weights")) {
      if (!j["weights"].is_array()) return Bad(source, where + ".weights", "expected an array of dimensions");
      for (const json& d : j["weights"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > (1 << 24)) {
          return Bad(source, where + ".weights", "expected dimensions from 0 to 16777216");
        }
        e.key.weights.push_back(d.get<int>());
      }
    }
  }
  const json& wg = j.contains("workgroup") ? j["workgroup"] : json();
  uint64_t product = 1;
  bool ok = wg.is_array() && wg.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i) {
    ok = wg[i].is_number_integer() && wg[i].get<int64_t>() >= 1 && wg[i].get<int64_t>() <= 1024;
    if (ok) {
      e.workgroup[i] = wg[i].get<uint32_t>();
      product *= e.workgroup[i];
    }
  }
  if (!ok || product > 1024) {
    return Bad(source, where + ".workgroup",
               fmt::format("{} is impossible: three sizes of 1..1024 whose product is at most 1024", JsonText(wg)));
  }
  for (const char* field : {"time_us", "default_us"}) {
    if (!j.contains(field)) continue;
    // At most 1000 s: written back rounded to ns, larger ones would overflow.
    if (!j[field].is_number() || j[field].get<double>() < 0 || j[field].get<double>() > 1e9) {
      return Bad(source, where + "." + field, "expected a time from 0 to 1e9 us");
    }
    (std::string(field) == "time_us" ? e.time_us : e.default_us) = j[field].get<double>();
  }
  return e;
}

absl::StatusOr<AccuracyEntry> ParseAccuracyEntry(const json& j, const std::string& source, const std::string& where) {
  if (!j.is_object()) return Bad(source, where, "expected an object");
  AccuracyEntry e;
  const bool hex = j.contains("model") && j["model"].is_string() && j["model"].get<std::string>().size() == 64 &&
                   j["model"].get<std::string>().find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!hex) return Bad(source, where + ".model", "expected the model structure's SHA-256, 64 lower-case hex digits");
  e.model = j["model"].get<std::string>();
  if (absl::Status s = OptionalString(j, "name", source, where + ".name", e.name); !s.ok()) return s;
  if (j.contains("budget")) {
    if (!j["budget"].is_number() || !(j["budget"].get<double>() > 0)) return Bad(source, where + ".budget", "expected a number > 0");
    e.budget = j["budget"].get<double>();
  }
  if (!j.contains("fp32_layers") || !j["fp32_layers"].is_array()) {
    return Bad(source, where + ".fp32_layers", "expected an array of tensor names");
  }
  for (const json& name : j["fp32_layers"]) {
    if (!name.is_string() || name.get<std::string>().empty()) {
      return Bad(source, where + ".fp32_layers", fmt::format("{} is not a tensor name", JsonText(name)));
    }
    e.fp32_layers.push_back(name.get<std::string>());
  }
  return e;
}

// How far apart two shapes are: the sum of |log2 ratio| over the extents
// (and the weights, when both have them of one rank).
double Distance(const DispatchKey& a, const DispatchKey& b) {
  auto d = [](int x, int y) { return std::abs(std::log2(std::max(x, 1)) - std::log2(std::max(y, 1))); };
  double sum = 0;
  for (size_t i = 0; i < 3; ++i) sum += d(a.in[i], b.in[i]) + d(a.out[i], b.out[i]);
  if (a.weights.size() == b.weights.size()) {
    for (size_t i = 0; i < a.weights.size(); ++i) sum += d(a.weights[i], b.weights[i]);
  } else {
    sum += 2;
  }
  return sum;
}

// Farther than this (e.g. every extent 2x off and more), a bucket says little.
constexpr double kMaxBucketDistance = 4.0;

// Table field `name` of `table`, if there: said once for both storage
// precisions, or as an object {"fp32": value, "fp16": value} with either or
// both; `one` checks a value and stores it.
template <typename Field, typename One>
absl::Status ParsePerStorage(const json& table, const std::string& source, const std::string& name, Field& fp32,
                             Field& fp16, One one) {
  if (!table.contains(name)) return absl::OkStatus();
  const json& j = table[name];
  if (!j.is_object()) {
    if (absl::Status s = one(j, name, fp32); !s.ok()) return s;
    fp16 = fp32;
    return absl::OkStatus();
  }
  for (const auto& [key, v] : j.items()) {
    const std::string where = name + "." + key;
    if (key != "fp32" && key != "fp16") return Bad(source, where, "expected the keys fp32 and fp16");
    if (absl::Status s = one(v, where, key == "fp32" ? fp32 : fp16); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The same field as text: one value where both are set alike, else an
// object of those set; nothing where neither is.
template <typename Field, typename IsSet>
std::string SerializePerStorage(const std::string& name, const Field& fp32, const Field& fp16, IsSet is_set) {
  auto value = [](const Field& f) {
    if constexpr (std::is_same_v<Field, std::optional<bool>>) return json(*f);
    else return json(f);
  };
  if (is_set(fp32) && fp32 == fp16) return fmt::format("  \"{}\": {},\n", name, JsonText(value(fp32)));
  if (!is_set(fp32) && !is_set(fp16)) return "";
  json j = json::object();
  if (is_set(fp32)) j["fp32"] = value(fp32);
  if (is_set(fp16)) j["fp16"] = value(fp16);
  return fmt::format("  \"{}\": {},\n", name, JsonText(j));
}

}  // namespace

std::string DispatchKey::ToString() const {
  std::string s = fmt::format("{} {} in {}x{}x{} out {}x{}x{}", op, fp16 ? "fp16" : "fp32", in[0], in[1], in[2], out[0],
                              out[1], out[2]);
  if (!weights.empty()) s += " w " + fmt::format("{}", fmt::join(weights, "x"));
  return s;
}

absl::StatusOr<Table> ParseTable(std::string_view text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // a syntax error, or a number past a double's range
    return absl::InvalidArgumentError(fmt::format("{}: not JSON ({})", source, e.what()));
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != "mgd-workgroups") {
    return Bad(source, "format", "not an mgd workgroup table (expected \"format\": \"mgd-workgroups\")");
  }
  if (!j.contains("version") || !j["version"].is_number_integer()) return Bad(source, "version", "missing");
  if (j["version"].get<int64_t>() != Table::kVersion) {
    return Bad(source, "version", fmt::format("{} is not supported (this mgd reads version {})", JsonText(j["version"]), Table::kVersion));
  }
  Table t;
  t.name = source;
  if (j.contains("gpu")) {
    const json& g = j["gpu"];
    if (!g.is_object()) return Bad(source, "gpu", "expected an object");
    for (const auto& [field, target] : {std::pair{"api", &t.gpu.api}, std::pair{"vendor", &t.gpu.vendor},
                                        std::pair{"device", &t.gpu.device}, std::pair{"driver_min", &t.gpu.driver_min}}) {
      if (absl::Status s = OptionalString(g, field, source, std::string("gpu.") + field, *target); !s.ok()) return s;
    }
    if (!t.gpu.api.empty() && t.gpu.api != "vulkan" && t.gpu.api != "gl") return Bad(source, "gpu.api", "expected \"vulkan\" or \"gl\"");
  }
  if (j.contains("tuned")) {
    if (!j["tuned"].is_boolean()) return Bad(source, "tuned", "expected true or false");
    t.tuned = j["tuned"].get<bool>();
  }
  if (absl::Status s = OptionalString(j, "notes", source, "notes", t.notes); !s.ok()) return s;
  if (j.contains("entries")) {
    if (!j["entries"].is_array()) return Bad(source, "entries", "expected an array");
    for (size_t i = 0; i < j["entries"].size(); ++i) {
      auto e = ParseEntry(j["entries"][i], source, fmt::format("entries[{}]", i));
      if (!e.ok()) return e.status();
      t.entries.push_back(*e);
    }
  }
  for (const auto& [name, field, most] : {std::tuple{"split_conv_outputs", &Table::split_conv_outputs, int64_t{1} << 30},
                                          std::tuple{"program_threads", &Table::program_threads, int64_t{1024}},
                                          std::tuple{"conv_block_x", &Table::conv_block_x, int64_t{16}},
                                          std::tuple{"conv_block_slices", &Table::conv_block_slices, int64_t{16}}}) {
    if (!j.contains(name)) continue;
    const json& v = j[name];
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > most) {
      return Bad(source, name, fmt::format("expected an integer from 1 to {}", most));
    }
    t.*field = v.get<int64_t>();
  }
  if (j.contains("gate_invocations")) {
    const json& v = j["gate_invocations"];
    const int64_t n = v.is_number_integer() ? v.get<int64_t>() : 0;
    if (n != 128 && n != 256 && n != 512 && n != 1024) return Bad(source, "gate_invocations", "expected 128, 256, 512 or 1024");
    t.gate_invocations = n;
  }
  // "int8_filter_bits": 8 or 32; "int8_dot_products": true or false.
  auto bits = [&](const json& v, const std::string& where, int64_t& field) {
    if (!v.is_number_integer() || (v.get<int64_t>() != 8 && v.get<int64_t>() != 32)) {
      return Bad(source, where, "expected 8 or 32");
    }
    field = v.get<int64_t>();
    return absl::OkStatus();
  };
  auto flag = [&](const json& v, const std::string& where, std::optional<bool>& field) {
    if (!v.is_boolean()) return Bad(source, where, "expected true or false");
    field = v.get<bool>();
    return absl::OkStatus();
  };
  for (const auto& [name, field] : {std::pair{"conv_block_flat", &Table::conv_block_flat},
                                    std::pair{"split_fused_sums", &Table::split_fused_sums}}) {
    if (!j.contains(name)) continue;
    if (absl::Status s = flag(j[name], name, t.*field); !s.ok()) return s;
  }
  if (absl::Status s = ParsePerStorage(j, source, "int8_filter_bits", t.int8_filter_bits_fp32, t.int8_filter_bits_fp16, bits);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          ParsePerStorage(j, source, "int8_dot_products", t.int8_dot_products_fp32, t.int8_dot_products_fp16, flag);
      !s.ok()) {
    return s;
  }
  if (j.contains("accuracy")) {
    if (!j["accuracy"].is_array()) return Bad(source, "accuracy", "expected an array");
    for (size_t i = 0; i < j["accuracy"].size(); ++i) {
      auto e = ParseAccuracyEntry(j["accuracy"][i], source, fmt::format("accuracy[{}]", i));
      if (!e.ok()) return e.status();
      t.accuracy.push_back(*e);
    }
  }
  return t;
}

absl::StatusOr<Table> ReadTableFile(const std::string& path) {
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return ParseTable(*text, path);
}

std::string SerializeTable(const Table& t) {
  json entries = json::array();
  for (const Entry& e : t.entries) {
    json j = {{"op", e.key.op}, {"precision", e.key.fp16 ? "fp16" : "fp32"}};
    if (e.any_shape) {
      j["shape"] = "any";
    } else {
      j["in"] = e.key.in;
      j["out"] = e.key.out;
      if (!e.key.weights.empty()) j["weights"] = e.key.weights;
    }
    j["workgroup"] = e.workgroup;
    if (e.time_us > 0) j["time_us"] = std::round(e.time_us * 1000) / 1000;
    if (e.default_us > 0) j["default_us"] = std::round(e.default_us * 1000) / 1000;
    entries.push_back(j);
  }
  json gpu = json::object();
  if (!t.gpu.api.empty()) gpu["api"] = t.gpu.api;
  if (!t.gpu.vendor.empty()) gpu["vendor"] = t.gpu.vendor;
  if (!t.gpu.device.empty()) gpu["device"] = t.gpu.device;
  if (!t.gpu.driver_min.empty()) gpu["driver_min"] = t.gpu.driver_min;
  // One entry per line: tables are reviewed in diffs.
  std::string out = fmt::format("{{\n  \"format\": \"mgd-workgroups\",\n  \"version\": {},\n  \"gpu\": {},\n  \"tuned\": {},\n",
                                Table::kVersion, JsonText(gpu), t.tuned ? "true" : "false");
  if (!t.notes.empty()) out += fmt::format("  \"notes\": {},\n", JsonText(json(t.notes)));
  if (t.split_conv_outputs > 0) out += fmt::format("  \"split_conv_outputs\": {},\n", t.split_conv_outputs);
  if (t.program_threads > 0) out += fmt::format("  \"program_threads\": {},\n", t.program_threads);
  if (t.gate_invocations > 0) out += fmt::format("  \"gate_invocations\": {},\n", t.gate_invocations);
  if (t.conv_block_x > 0) out += fmt::format("  \"conv_block_x\": {},\n", t.conv_block_x);
  if (t.conv_block_slices > 0) out += fmt::format("  \"conv_block_slices\": {},\n", t.conv_block_slices);
  if (t.conv_block_flat) out += fmt::format("  \"conv_block_flat\": {},\n", *t.conv_block_flat);
  if (t.split_fused_sums) out += fmt::format("  \"split_fused_sums\": {},\n", *t.split_fused_sums);
  out += SerializePerStorage("int8_filter_bits", t.int8_filter_bits_fp32, t.int8_filter_bits_fp16,
                             [](int64_t bits) { return bits > 0; });
  out += SerializePerStorage("int8_dot_products", t.int8_dot_products_fp32, t.int8_dot_products_fp16,
                             [](const std::optional<bool>& dot) { return dot.has_value(); });
  out += "  \"entries\": [";
  for (size_t i = 0; i < entries.size(); ++i) out += (i ? ",\n    " : "\n    ") + JsonText(entries[i]);
  out += entries.empty() ? "]" : "\n  ]";
  if (!t.accuracy.empty()) {
    out += ",\n  \"accuracy\": [";
    for (size_t i = 0; i < t.accuracy.size(); ++i) {
      const AccuracyEntry& a = t.accuracy[i];
      json j = {{"model", a.model}, {"name", a.name}, {"fp32_layers", a.fp32_layers}};
      if (a.budget > 0) j["budget"] = a.budget;
      out += (i ? ",\n    " : "\n    ") + JsonText(j);
    }
    out += "\n  ]";
  }
  return out + "\n}\n";
}

void Merge(Table& table, const Entry& entry) {
  for (Entry& e : table.entries) {
    if (e.any_shape == entry.any_shape && e.key == entry.key) {
      e = entry;
      return;
    }
  }
  table.entries.push_back(entry);
}

void Merge(Table& table, const AccuracyEntry& entry) {
  for (AccuracyEntry& e : table.accuracy) {
    if (e.model == entry.model) {
      e = entry;
      return;
    }
  }
  table.accuracy.push_back(entry);
}

std::vector<std::string> Fp32Layers(const std::vector<const Table*>& tables, const std::string& model) {
  std::vector<std::string> layers;
  for (const Table* t : tables) {
    for (const AccuracyEntry& e : t->accuracy) {
      if (e.model == model) layers.insert(layers.end(), e.fp32_layers.begin(), e.fp32_layers.end());
    }
  }
  std::sort(layers.begin(), layers.end());
  layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
  return layers;
}

int64_t FirstSet(const std::vector<const Table*>& tables, int64_t Table::*field, int64_t fallback) {
  for (const Table* t : tables) {
    if (t->*field > 0) return t->*field;
  }
  return fallback;
}

bool FirstSet(const std::vector<const Table*>& tables, std::optional<bool> Table::*field, bool fallback) {
  for (const Table* t : tables) {
    if ((t->*field).has_value()) return *(t->*field);
  }
  return fallback;
}

bool Matches(const GpuMatch& m, const gpu::GpuInfo& info) {
  return (m.api.empty() || m.api == gpu::ApiName(info.api)) && Contains(info.vendor, m.vendor) &&
         Contains(info.device_name, m.device) && (m.driver_min.empty() || VersionAtLeast(info.driver_version, m.driver_min));
}

const Table* BuiltinTableFor(const gpu::GpuInfo& info) {
  for (const Table& t : BuiltinTables()) {
    if (Matches(t.gpu, info)) return &t;
  }
  return nullptr;
}

bool Fits(const Workgroup& wg, const gpu::GpuLimits& limits) {
  uint64_t product = 1;
  for (size_t i = 0; i < 3; ++i) {
    if (wg[i] == 0 || wg[i] > limits.max_workgroup_size[i]) return false;
    product *= wg[i];
  }
  return product <= limits.max_workgroup_invocations;
}

// The default calculator. How many invocations a workgroup gets, per family:
// * NVIDIA: 64 (two 32-wide warps). On the H200 8x8 beat 4x4 and 16x16 on
//   every model of docs/perf.md (issue 4's measurements).
// * AMD: 64 (one GCN wave64; RDNA runs it as two wave32).
// * Arm Mali: 64 (Arm's Mali best-practices guide: 64 as the baseline, a
//   multiple of 4, larger only when shared memory needs it).
// * Qualcomm Adreno: 64 (one wave on A5xx/A6xx in full precision; the TFLite
//   GPU paper reports up to 30% from tuning there, so this is a start).
// * Imagination PowerVR: 32 (its 32-wide tasks; larger groups only add
//   barriers' cost).
// * Everything else, software GPUs included: 64 (llvmpipe runs a workgroup
//   as one task of 8-wide SIMD; fewer invocations waste its set-up).
// Then the shape: powers of two with that product (fewer when the grid is
// smaller), within the limits. x first: as wide as the grid allows up to 8,
// at the cost of up to 50% padding (x is innermost in PHWC4: lanes along x
// read neighbouring memory, coalesced on a GPU and in one SIMD register on
// llvmpipe; a blocked convolution's grid of 7 x 56 x 16 ran 3.5x slower in
// 1x8x8 than in 8x8x1 on lavapipe). Then least padding past the grid
// (within 5%), then small z, then a near-square tile with x >= y
// (near-square reuses neighbours' inputs).
Workgroup DefaultWorkgroup(const std::array<uint32_t, 3>& grid, const gpu::GpuInfo& info) {
  const std::string vendor = Lower(info.vendor + " " + info.device_name);
  uint32_t target = 64;
  if (!info.is_software() && (vendor.find("imagination") != std::string::npos || vendor.find("powervr") != std::string::npos)) {
    target = 32;
  }
  const uint64_t volume = uint64_t{std::max(grid[0], 1u)} * std::max(grid[1], 1u) * std::max(grid[2], 1u);
  while (target > 1 && (target > info.limits.max_workgroup_invocations || target / 2 >= volume)) target /= 2;
  struct Candidate {
    Workgroup wg;
    double waste;
  };
  std::vector<Candidate> candidates;
  for (uint32_t x = 1; x <= target; x *= 2) {
    for (uint32_t y = 1; x * y <= target; y *= 2) {
      const uint32_t z = target / (x * y);
      const Workgroup wg{x, y, z};
      if (!Fits(wg, info.limits)) continue;
      double padded = 1;
      for (size_t i = 0; i < 3; ++i) {
        const uint32_t g = std::max(grid[i], 1u);
        padded *= static_cast<double>((g + wg[i] - 1) / wg[i] * wg[i]);
      }
      candidates.push_back({wg, padded / static_cast<double>(volume)});
    }
  }
  if (candidates.empty()) return {1, 1, 1};
  double least = candidates[0].waste;
  for (const Candidate& c : candidates) least = std::min(least, c.waste);
  uint32_t wide_x = 1;  // the grid's x rounded up to a power of two, at most 8
  while (wide_x < 8 && wide_x < grid[0]) wide_x *= 2;
  for (; wide_x > 1; wide_x /= 2) {  // the widest x within 50% padding
    const auto fits = [&](const Candidate& c) { return c.wg[0] >= wide_x && c.waste <= least * 1.5; };
    if (std::any_of(candidates.begin(), candidates.end(), fits)) break;
  }
  std::erase_if(candidates, [&](const Candidate& c) { return c.wg[0] < wide_x; });
  least = candidates[0].waste;
  for (const Candidate& c : candidates) least = std::min(least, c.waste);
  auto shape_score = [](const Workgroup& wg) {
    return std::abs(std::log2(static_cast<double>(wg[0]) / static_cast<double>(wg[1])) - 0.5);
  };
  const Candidate* best = nullptr;
  for (const Candidate& c : candidates) {
    if (c.waste > least * 1.05) continue;
    if (best == nullptr || c.wg[2] < best->wg[2] || (c.wg[2] == best->wg[2] && shape_score(c.wg) < shape_score(best->wg))) {
      best = &c;
    }
  }
  return best->wg;
}

const char* SourceName(Source source) {
  switch (source) {
    case Source::kTable: return "table";
    case Source::kBucket: return "bucket";
    case Source::kOpRule: return "op_rule";
    case Source::kDefault: return "default";
  }
  return "?";
}

Choice Choose(const std::vector<const Table*>& tables, const DispatchKey& key, const std::array<uint32_t, 3>& grid,
              const gpu::GpuInfo& info) {
  for (const Table* t : tables) {
    for (const Entry& e : t->entries) {
      if (!e.any_shape && e.key == key && Fits(e.workgroup, info.limits)) return {e.workgroup, Source::kTable, t->name};
    }
  }
  const Entry* nearest = nullptr;
  const Table* nearest_table = nullptr;
  double distance = kMaxBucketDistance;
  for (const Table* t : tables) {
    for (const Entry& e : t->entries) {
      if (e.any_shape || e.key.op != key.op || e.key.fp16 != key.fp16 || !Fits(e.workgroup, info.limits)) continue;
      const double d = Distance(e.key, key);
      if (d <= distance && (nearest == nullptr || d < distance)) {
        nearest = &e;
        nearest_table = t;
        distance = d;
      }
    }
  }
  if (nearest != nullptr) return {nearest->workgroup, Source::kBucket, nearest_table->name};
  for (const Table* t : tables) {
    for (const Entry& e : t->entries) {
      if (e.any_shape && e.key.op == key.op && e.key.fp16 == key.fp16 && Fits(e.workgroup, info.limits)) {
        return {e.workgroup, Source::kOpRule, t->name};
      }
    }
  }
  return {DefaultWorkgroup(grid, info), Source::kDefault, ""};
}

}  // namespace mgd::tuning
