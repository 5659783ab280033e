// Which build of mgd this is: its version and a hash over its sources
// (delegate/build_id.cmake), so that caches written by other code are not
// reused.
#pragma once

namespace mgd {

const char* BuildId();  // "0.1.0+1f2e3d4c5b6a7980"

}  // namespace mgd
