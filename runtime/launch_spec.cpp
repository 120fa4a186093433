#include "runtime/launch_spec.h"

namespace gg::rt {

int elem_bytes(ElemType t) { return t == ElemType::F32 ? 4 : 2; }

const char* elem_name(ElemType t) {
  switch (t) {
    case ElemType::F16: return "f16";
    case ElemType::BF16: return "bf16";
    case ElemType::F32: return "f32";
  }
  return "?";
}

}  // namespace gg::rt
