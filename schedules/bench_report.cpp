#include "schedules/bench_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "dsl/error.h"

namespace gg {

namespace {

std::string shape_text(const BenchShape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string xml_text(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

std::vector<BenchShape> parse_shapes(const std::string& text, const std::string& file) {
  std::vector<BenchShape> shapes;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string content = line.substr(0, line.find('#'));
    std::istringstream words(content);
    std::string first;
    if (!(words >> first)) continue;  // blank or comment
    auto fail = [&](const std::string& why) {
      throw_user_error("shapes-file", file + ":" + std::to_string(number) + ": " + why + " in '" + line +
                       "'; each line is 'M N K [label]' with positive integers (# starts a comment)");
    };
    BenchShape s;
    int64_t* dims[3] = {&s.m, &s.n, &s.k};
    std::string word = first;
    for (int d = 0; d < 3; ++d) {
      if (d > 0 && !(words >> word)) fail("expected 3 sizes, found " + std::to_string(d));
      size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(word, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != word.size() || v <= 0) fail("'" + word + "' is not a positive integer");
      *dims[d] = v;
    }
    std::string rest;
    std::getline(words, rest);
    const size_t b = rest.find_first_not_of(" \t"), e = rest.find_last_not_of(" \t\r");
    s.label = b == std::string::npos ? "" : rest.substr(b, e - b + 1);
    shapes.push_back(s);
  }
  if (shapes.empty()) throw_user_error("shapes-file", file + ": no shapes (each line is 'M N K [label]')");
  return shapes;
}

double geometric_mean_ratio(const std::vector<BenchRow>& rows) {
  double log_sum = 0;
  int count = 0;
  for (const BenchRow& r : rows)
    if (r.ran && r.passed && r.ratio() > 0) {
      log_sum += std::log(r.ratio());
      ++count;
    }
  return count ? std::exp(log_sum / count) : 0;
}

std::string format_bench_table(const std::vector<BenchRow>& rows, const std::string& device, const std::string& dtype) {
  std::ostringstream os;
  os << "device: " << device << ", " << dtype << "\n\n";
  os << "| shape | label | schedule | config | TFLOP/s | cuBLAS TFLOP/s | ratio | SM MHz | W | check |\n";
  os << "|---|---|---|---|---|---|---|---|---|---|\n";
  for (const BenchRow& r : rows) {
    os << "| " << shape_text(r.shape) << " | " << r.shape.label << " | " << r.schedule << " | " << r.config << " | ";
    if (!r.ran)
      os << "- | - | - | - | - | refused: " << r.refused << " |\n";
    else
      os << fixed(r.tflops, 1) << " | " << fixed(r.cublas_tflops, 1) << " | " << fixed(r.ratio(), 3) << " | "
         << (r.sm_clock_mhz ? std::to_string(r.sm_clock_mhz) : "-") << " | " << (r.power_w > 0 ? fixed(r.power_w, 0) : "-")
         << " | " << (r.passed ? "pass" : "FAIL") << " |\n";
  }
  const double g = geometric_mean_ratio(rows);
  int counted = 0;
  for (const BenchRow& r : rows) counted += r.ran && r.passed;
  os << "\ngeometric mean of the ratio over " << counted << " of " << rows.size() << " shapes: " << fixed(g, 3)
     << "\n";
  return os.str();
}

std::string format_bench_json(const std::vector<BenchRow>& rows, const std::string& device, const std::string& dtype) {
  std::ostringstream os;
  os << "{\"device\": " << json_string(device) << ", \"dtype\": " << json_string(dtype)
     << ", \"geomean_ratio\": " << fixed(geometric_mean_ratio(rows), 4) << ", \"shapes\": [";
  for (size_t i = 0; i < rows.size(); ++i) {
    const BenchRow& r = rows[i];
    os << (i ? ", " : "") << "{\"m\": " << r.shape.m << ", \"n\": " << r.shape.n << ", \"k\": " << r.shape.k
       << ", \"label\": " << json_string(r.shape.label) << ", \"schedule\": " << json_string(r.schedule)
       << ", \"kernel\": " << json_string(r.kernel) << ", \"config\": " << json_string(r.config) << ", \"ran\": " << (r.ran ? "true" : "false")
       << ", \"refused\": " << json_string(r.refused) << ", \"passed\": " << (r.passed ? "true" : "false")
       << ", \"tflops\": " << fixed(r.tflops, 2) << ", \"cublas_tflops\": " << fixed(r.cublas_tflops, 2)
       << ", \"ratio\": " << fixed(r.ratio(), 4) << ", \"sm_clock_mhz\": " << r.sm_clock_mhz
       << ", \"power_w\": " << fixed(r.power_w, 1) << "}";
  }
  os << "]}\n";
  return os.str();
}

std::string format_bench_svg(const std::vector<BenchRow>& rows, const std::string& device, const std::string& dtype) {
  const int bar = 28, gap = 8, left = 60, top = 40, height = 240;
  const int width = left + int(rows.size()) * (bar + gap) + 20;
  double top_ratio = 1.25;
  for (const BenchRow& r : rows) top_ratio = std::max(top_ratio, r.ratio() * 1.05);
  auto y_of = [&](double ratio) { return top + height - int(std::lround(ratio / top_ratio * height)); };
  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << top + height + 120
     << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  os << "<text x=\"" << left << "\" y=\"20\" font-size=\"13\">" << xml_text(device + ", " + dtype)
     << ": ratio to cuBLAS per shape, geometric mean " << fixed(geometric_mean_ratio(rows), 3) << "</text>\n";
  os << "<line x1=\"" << left << "\" y1=\"" << y_of(1.0) << "\" x2=\"" << width - 10 << "\" y2=\"" << y_of(1.0)
     << "\" stroke=\"black\" stroke-dasharray=\"4 3\"/>\n";
  os << "<text x=\"4\" y=\"" << y_of(1.0) + 4 << "\">1.0x</text>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const BenchRow& r = rows[i];
    const int x = left + int(i) * (bar + gap);
    const double ratio = r.ran && r.passed ? r.ratio() : 0;
    const std::string color = !r.ran || !r.passed ? "#999999" : ratio >= 1.0 ? "#2a7d2a" : "#c05a1a";
    os << "<rect x=\"" << x << "\" y=\"" << y_of(ratio) << "\" width=\"" << bar << "\" height=\""
       << top + height - y_of(ratio) << "\" fill=\"" << color << "\"><title>" << xml_text(shape_text(r.shape))
       << " " << xml_text(r.schedule) << ": " << (r.ran ? fixed(ratio, 3) : "refused") << "</title></rect>\n";
    os << "<text transform=\"translate(" << x + bar / 2 << "," << top + height + 6 << ") rotate(60)\">"
       << xml_text(shape_text(r.shape)) << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

}  // namespace gg
