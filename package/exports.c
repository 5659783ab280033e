/* libmgd's own translation unit: the C API comes from the static libraries
 * linked whole (CMakeLists.txt); this checks that the public headers compile
 * as C, alone and together. */
#include "mgd/c_api.h"
#include "mgd/gpu_delegate.h"
#include "mgd/pipeline.h"
