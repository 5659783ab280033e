// Checks that stdin is one JSON object, strictly (nlohmann rejects invalid
// UTF-8), and optionally that string field FIELD holds TEXT: the CLI tests
// feed it what `mgd ... --json` printed.
//   json_check [FIELD TEXT] < OUTPUT.json
#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

int main(int argc, char** argv) {
  const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "json_check: not JSON: %s\n", e.what());
    return 1;
  }
  if (!j.is_object()) {
    std::fprintf(stderr, "json_check: not a JSON object\n");
    return 1;
  }
  if (argc == 3) {
    if (!j.contains(argv[1]) || !j[argv[1]].is_string() || j[argv[1]].get<std::string>().find(argv[2]) == std::string::npos) {
      std::fprintf(stderr, "json_check: field '%s' does not hold '%s': %s\n", argv[1], argv[2], j.dump().c_str());
      return 1;
    }
  }
  return 0;
}
