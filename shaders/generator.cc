#include "shaders/generator.h"

#include <fmt/format.h>


namespace mgd::shaders {

absl::StatusOr<layout::Bhwc> ToBhwc(const Shape& s) {
  switch (s.size()) {
    case 1: return layout::Bhwc{1, 1, 1, s[0]};
    case 2: return layout::Bhwc{s[0], 1, 1, s[1]};
    case 3: return layout::Bhwc{s[0], 1, s[1], s[2]};
    case 4: return layout::Bhwc{s[0], s[1], s[2], s[3]};
    default:
      return absl::InvalidArgumentError(fmt::format("rank {} tensors are not supported on the GPU", s.size()));
  }
}

bool SameBhwc(const Shape& a, const Shape& b) {
  auto x = ToBhwc(a);
  auto y = ToBhwc(b);
  return x.ok() && y.ok() && *x == *y;
}

std::array<uint32_t, 3> BlockedExtent(const layout::Bhwc& s, OutputBlock block) {
  auto up = [](int n, int b) { return static_cast<uint32_t>((n + b - 1) / b); };
  const uint32_t x = up(s.width, block.x), y = static_cast<uint32_t>(s.height);
  const uint32_t z = static_cast<uint32_t>(s.batch) * up(s.slices(), block.slices);
  if (block.flat) return {x * y, 1, z};
  return {x, y, z};
}

std::array<uint32_t, 3> GridFor(const layout::Bhwc& s, const std::array<uint32_t, 3>& wg, OutputBlock block) {
  const std::array<uint32_t, 3> e = BlockedExtent(s, block);
  auto up = [](uint32_t n, uint32_t w) { return std::max<uint32_t>(1, (n + w - 1) / w); };
  return {up(e[0], wg[0]), up(e[1], wg[1]), up(e[2], wg[2])};
}

std::optional<std::array<uint32_t, 3>> LinearGridFor(const layout::Bhwc& s) {
  const uint64_t total = static_cast<uint64_t>(s.width) * s.height * s.batch * s.slices();
  const uint64_t groups = std::max<uint64_t>(1, (total + kLinearWorkgroup[0] - 1) / kLinearWorkgroup[0]);
  if (groups > 65535) return std::nullopt;
  return std::array<uint32_t, 3>{static_cast<uint32_t>(groups), 1, 1};
}

}  // namespace mgd::shaders
