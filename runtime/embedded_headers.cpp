#include "runtime/embedded_headers.h"

#include <algorithm>

// device_header_source and device_header_names are in the generated embedded_device_headers.cpp.

namespace gg::rt {

std::string device_header_with_sections(std::string_view file_name, const std::vector<std::string>& keep) {
  constexpr std::string_view kBegin = "// @section ", kEnd = "// @end-section";
  const std::string_view text = device_header_source(file_name);
  std::string out;
  std::vector<std::string> found;
  bool in_section = false, keeping = true;
  for (size_t at = 0; at < text.size();) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.rfind(kBegin, 0) == 0) {
      const std::string name(line.substr(kBegin.size()));
      in_section = true;
      keeping = std::find(keep.begin(), keep.end(), name) != keep.end();
      if (keeping) found.push_back(name);
    }
    if (keeping) (out += line) += '\n';
    if (in_section && line == kEnd) in_section = false, keeping = true;
  }
  for (const std::string& name : keep)
    if (std::find(found.begin(), found.end(), name) == found.end())
      throw std::out_of_range("device header '" + std::string(file_name) + "' has no section named '" + name + "'");
  return out;
}

}  // namespace gg::rt
