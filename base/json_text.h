// JSON text as mgd writes it. Strings that are not UTF-8 (a path, a tensor
// name, a driver's string: any bytes a user or a system hands over) have
// their invalid bytes replaced by U+FFFD instead of making nlohmann::json
// throw (type_error.316) mid-output.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace mgd {

inline std::string JsonText(const nlohmann::json& j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace mgd
