// Early-return helpers for absl::Status / absl::StatusOr, used across mgd.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

#include <fmt/format.h>

#include <string_view>

// Debian's abseil has its own string_view type (Status::message() returns
// it): let fmt format it like std::string_view.
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(absl::string_view s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(s.data(), s.size()), ctx);
  }
};

#define MGD_RETURN_IF_ERROR(expr)   \
  do {                              \
    absl::Status mgd_status_ = (expr); \
    if (!mgd_status_.ok()) return mgd_status_; \
  } while (false)

#define MGD_CONCAT_INNER(a, b) a##b
#define MGD_CONCAT(a, b) MGD_CONCAT_INNER(a, b)

// MGD_ASSIGN_OR_RETURN(auto x, StatusOrExpr());
#define MGD_ASSIGN_OR_RETURN(lhs, expr) \
  MGD_ASSIGN_OR_RETURN_IMPL(MGD_CONCAT(mgd_statusor_, __LINE__), lhs, expr)
#define MGD_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(*tmp)
