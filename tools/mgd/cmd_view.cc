// mgd view: the viewer is its own program, mgd-view (tools/view), built on
// the public C API only as an app would be; `mgd view ARGS` runs it.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "tools/mgd/commands.h"

namespace mgd::cli {

int ExecViewer(int argc, char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  // Installed beside mgd; in a build tree, in tools/view beside tools/mgd.
  std::vector<std::filesystem::path> candidates = {self.parent_path() / "mgd-view",
                                                   self.parent_path().parent_path() / "view" / "mgd-view"};
  for (const auto& viewer : candidates) {
    if (ec || access(viewer.c_str(), X_OK) != 0) continue;
    std::vector<char*> args = {const_cast<char*>(viewer.c_str())};
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    execv(viewer.c_str(), args.data());
    std::fprintf(stderr, "mgd view: cannot run %s: %s\n", viewer.c_str(), std::strerror(errno));
    return 1;
  }
  std::fprintf(stderr, "mgd view: mgd-view is not installed beside %s\n", self.c_str());
  return 1;
}

}  // namespace mgd::cli
