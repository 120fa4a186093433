#include "dsl/error.h"

namespace gg {

CompileError::CompileError(std::string rule, const std::string& message)
    : std::runtime_error("error[" + rule + "]: " + message), rule_(std::move(rule)), message_(message) {}

InternalError::InternalError(const char* file, int line, const std::string& condition, const std::string& detail)
    : std::logic_error("internal error (a gemmgen bug) at " + std::string(file) + ":" + std::to_string(line) +
                       ": check `" + condition + "` failed" + (detail.empty() ? "" : ": " + detail)) {}

void throw_user_error(const std::string& rule, const std::string& message) { throw CompileError(rule, message); }

}  // namespace gg
