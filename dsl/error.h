#pragma once
// Two error channels (DESIGN.md rule 4): CompileError for anything a user can cause,
// InternalError for gemmgen bugs. A user mistake that reaches an InternalError is a bug.
#include <stdexcept>
#include <string>

namespace gg {

// `rule` is a stable id (see docs/errors.md); the message names the tensor/axis, the rule
// broken, and what would be legal.
class CompileError : public std::runtime_error {
 public:
  CompileError(std::string rule, const std::string& message);
  const std::string& rule() const { return rule_; }
  const std::string& message() const { return message_; }

 private:
  std::string rule_;
  std::string message_;
};

class InternalError : public std::logic_error {
 public:
  InternalError(const char* file, int line, const std::string& condition, const std::string& detail);
};

[[noreturn]] void throw_user_error(const std::string& rule, const std::string& message);

}  // namespace gg

#define GG_INTERNAL_CHECK(cond, detail)                                         \
  do {                                                                           \
    if (!(cond)) throw ::gg::InternalError(__FILE__, __LINE__, #cond, (detail)); \
  } while (0)
