//===- KernelSpec.cpp - Kernel launch metadata ----------------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Runtime/KernelSpec.h"

#include <algorithm>
#include <cmath>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rowred::runtime;

namespace {
/// Recursive-descent JSON reader over `text`.
class JsonParser {
public:
  explicit JsonParser(const std::string &text) : text(text) {}

  bool parseDocument(Json &out, std::string &error) {
    if (!parseValue(out, 0) || (skipSpace(), pos != text.size())) {
      error = message.empty() ? "unexpected trailing characters" : message;
      error += " at offset " + std::to_string(pos);
      return false;
    }
    return true;
  }

private:
  void skipSpace() {
    while (pos < text.size() && std::strchr(" \t\r\n", text[pos]))
      ++pos;
  }
  bool fail(const std::string &why) {
    message = why;
    return false;
  }
  /// Skips space and consumes `c` if it is next.
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }

  /// After an element of an object or array: true at ',' (another element
  /// follows), false with `closed` set at `close`, false on anything else.
  bool nextElement(char close, bool &closed) {
    closed = false;
    if (consume(','))
      return true;
    if (consume(close)) {
      closed = true;
      return false;
    }
    return fail(std::string("expected ',' or '") + close + "'");
  }

  bool literal(const char *word) {
    size_t n = std::strlen(word);
    if (text.compare(pos, n, word) != 0)
      return fail("invalid literal");
    pos += n;
    return true;
  }

  bool parseString(std::string &out) {
    ++pos; // opening quote
    while (pos < text.size() && text[pos] != '"') {
      char c = text[pos++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos >= text.size())
        return fail("unterminated escape");
      char e = text[pos++];
      switch (e) {
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        if (pos + 4 > text.size())
          return fail("truncated \\u escape");
        std::string hex = text.substr(pos, 4);
        char *end = nullptr;
        unsigned code = std::strtoul(hex.c_str(), &end, 16);
        if (end != hex.c_str() + 4)
          return fail("invalid \\u escape");
        pos += 4;
        if (code < 0x80) {
          out += static_cast<char>(code);
        } else if (code < 0x800) {
          out += static_cast<char>(0xC0 | (code >> 6));
          out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (code >> 12));
          out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (code & 0x3F));
        }
        break;
      }
      default:
        out += e;
        break;
      }
    }
    if (pos >= text.size())
      return fail("unterminated string");
    ++pos;
    return true;
  }

  bool parseValue(Json &out, int depth) {
    if (depth > 64)
      return fail("nesting too deep");
    skipSpace();
    if (pos >= text.size())
      return fail("unexpected end of input");
    char c = text[pos];
    if (c == '{') {
      out.kind = Json::Kind::Object;
      ++pos;
      if (consume('}'))
        return true;
      bool closed = false;
      do {
        skipSpace();
        if (pos >= text.size() || text[pos] != '"')
          return fail("expected a string key");
        std::string key;
        if (!parseString(key))
          return false;
        if (!consume(':'))
          return fail("expected ':'");
        if (!parseValue(out.object[key], depth + 1))
          return false;
      } while (nextElement('}', closed));
      return closed;
    }
    if (c == '[') {
      out.kind = Json::Kind::Array;
      ++pos;
      if (consume(']'))
        return true;
      bool closed = false;
      do {
        out.array.emplace_back();
        if (!parseValue(out.array.back(), depth + 1))
          return false;
      } while (nextElement(']', closed));
      return closed;
    }
    if (c == '"') {
      out.kind = Json::Kind::String;
      return parseString(out.string);
    }
    if (c == 't' || c == 'f') {
      out.kind = Json::Kind::Bool;
      out.boolean = c == 't';
      return literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') {
      out.kind = Json::Kind::Null;
      return literal("null");
    }
    const char *begin = text.c_str() + pos;
    char *end = nullptr;
    errno = 0;
    out.number = std::strtod(begin, &end);
    if (end == begin || errno == ERANGE)
      return fail("invalid value");
    out.kind = Json::Kind::Number;
    pos += end - begin;
    return true;
  }

  const std::string &text;
  size_t pos = 0;
  std::string message;
};
} // namespace

std::optional<Json> Json::parse(const std::string &text, std::string &error) {
  Json value;
  if (!JsonParser(text).parseDocument(value, error))
    return std::nullopt;
  return value;
}

const Json *Json::get(const std::string &key) const {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

std::optional<DType> rowred::runtime::parseDType(const std::string &name) {
  if (name == "f32")
    return DType::F32;
  if (name == "f16")
    return DType::F16;
  if (name == "bf16")
    return DType::BF16;
  if (name == "i32")
    return DType::I32;
  if (name == "i64")
    return DType::I64;
  return std::nullopt;
}

bool rowred::runtime::isFloatType(DType type) {
  return type == DType::F32 || type == DType::F16 || type == DType::BF16;
}

const char *rowred::runtime::dtypeName(DType type) {
  switch (type) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  }
  return "?";
}

int rowred::runtime::dtypeBytes(DType type) {
  switch (type) {
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::I64:
    return 8;
  }
  return 4;
}

bool rowred::runtime::isRegularFile(const std::string &path,
                                    std::string &error) {
  std::error_code ec;
  std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (ec) {
    error = "cannot open '" + path + "': " + ec.message();
    return false;
  }
  if (!std::filesystem::is_regular_file(status)) {
    error = "'" + path +
            "' is not a regular file (a device, pipe or directory has no "
            "end to read to)";
    return false;
  }
  return true;
}

bool rowred::runtime::readFile(const std::string &path, std::string &contents,
                               std::string &error) {
  if (!isRegularFile(path, error))
    return false;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  contents = ss.str();
  return true;
}

const char *rowred::runtime::roleName(KernelOperand::Role role) {
  switch (role) {
  case KernelOperand::Role::Input:
    return "input";
  case KernelOperand::Role::Output:
    return "output";
  case KernelOperand::Role::Column:
    return "column";
  case KernelOperand::Role::Row:
    return "row";
  case KernelOperand::Role::RowOutput:
    return "row_output";
  case KernelOperand::Role::ColumnSum:
    return "column_sum";
  case KernelOperand::Role::Total:
    return "total";
  }
  return "?";
}

int64_t KernelSpec::count(KernelOperand::Role role) const {
  int64_t n = 0;
  for (const KernelOperand &operand : operands)
    n += operand.role == role;
  return n;
}

/// The `variants` of `json` into `spec`, sorted by their rows; false with
/// `error` when the list is not one of {kernel, max_rows}.
static bool readVariants(const Json &json, KernelSpec &spec,
                         std::string &error) {
  const Json *list = json.get("variants");
  if (!list)
    return true;
  error = "has invalid variants: a list of at most 8 {kernel, max_rows}, "
          "each a kernel name and a positive number of rows";
  if (list->kind != Json::Kind::Array || list->array.size() > 8)
    return false;
  for (const Json &entry : list->array) {
    const Json *kernel = entry.get("kernel"), *rows = entry.get("max_rows");
    if (entry.kind != Json::Kind::Object || !kernel ||
        kernel->kind != Json::Kind::String || kernel->string.empty() ||
        kernel->string.find_first_of("/\\") != std::string::npos || !rows ||
        rows->kind != Json::Kind::Number || rows->number < 1 ||
        rows->number > INT32_MAX || rows->number != int64_t(rows->number))
      return false;
    spec.variants.push_back({kernel->string, int64_t(rows->number)});
  }
  std::sort(spec.variants.begin(), spec.variants.end(),
            [](const KernelVariant &a, const KernelVariant &b) {
              return a.maxRows < b.maxRows;
            });
  error.clear();
  return true;
}

/// Reads `operands` into spec.operands (x and y of the spec's types when
/// absent), checking that they come in role order (inputs, outputs,
/// per-column operands, per-row inputs, per-row outputs), that there is at
/// least one input and one output (of rows or per row), that the first input
/// and output have the spec's input and output types, that rows, columns and
/// per-row outputs are floating-point and per-row inputs integers. On
/// failure sets `error` (to follow the file's name).
static bool readOperands(const Json &json, KernelSpec &spec,
                         std::string &error) {
  using Role = KernelOperand::Role;
  const Json *list = json.get("operands");
  if (!list) {
    spec.operands = {{"x", Role::Input, spec.inputType},
                     {"y", Role::Output, spec.outputType}};
    return true;
  }
  if (list->kind != Json::Kind::Array || list->array.empty() ||
      list->array.size() > 64) {
    error = "has invalid operands: a list of 2 to 64 entries";
    return false;
  }
  for (const Json &entry : list->array) {
    const Json *name = entry.get("name"), *role = entry.get("role"),
               *type = entry.get("type");
    auto isString = [](const Json *v) {
      return v && v->kind == Json::Kind::String;
    };
    std::optional<DType> dtype =
        isString(type) ? parseDType(type->string) : std::nullopt;
    if (entry.kind != Json::Kind::Object || !isString(name) ||
        !isString(role) || !dtype) {
      error = "has an invalid operand: each is {name, role, type} with a "
              "type of f32, f16, bf16, i32 or i64";
      return false;
    }
    KernelOperand operand{name->string, Role::Input, *dtype};
    if (role->string == "output")
      operand.role = Role::Output;
    else if (role->string == "column")
      operand.role = Role::Column;
    else if (role->string == "row")
      operand.role = Role::Row;
    else if (role->string == "row_output")
      operand.role = Role::RowOutput;
    else if (role->string == "column_sum")
      operand.role = Role::ColumnSum;
    else if (role->string == "total")
      operand.role = Role::Total;
    else if (role->string != "input") {
      error = "has an operand of unknown role '" + role->string +
              "' (input, output, column, row, row_output, column_sum or "
              "total)";
      return false;
    }
    if (!spec.operands.empty() && operand.role < spec.operands.back().role) {
      error = "lists its operands out of order: inputs, outputs, columns, "
              "rows, row outputs, column sums, then totals";
      return false;
    }
    bool rowType = operand.type == DType::I32 || operand.type == DType::I64 ||
                   operand.type == DType::F32;
    if (operand.role == Role::Row ? !rowType : !isFloatType(operand.type)) {
      error = "has operand '" + operand.name + "' of role " + role->string +
              " and type " + type->string +
              ": per-row inputs are i32, i64 or f32, every other operand "
              "f32, f16 or bf16";
      return false;
    }
    spec.operands.push_back(std::move(operand));
  }
  int64_t outputs = spec.count(Role::Output);
  if (spec.count(Role::Input) == 0 ||
      outputs + spec.count(Role::RowOutput) + spec.count(Role::ColumnSum) +
              spec.count(Role::Total) ==
          0 ||
      spec.operands.front().type != spec.inputType ||
      (outputs > 0 &&
       spec.operands[spec.count(Role::Input)].type != spec.outputType)) {
    error = "has operands that disagree with input_type and output_type, or "
            "lack an input or an output";
    return false;
  }
  return true;
}

std::optional<KernelSpec> KernelSpec::load(const std::string &jsonPath,
                                           std::string &error) {
  std::string text;
  if (!readFile(jsonPath, text, error))
    return std::nullopt;
  std::optional<KernelSpec> spec = parse(text, jsonPath, error);
  if (!spec)
    return std::nullopt;
  // The PTX file sits next to the JSON, and must define the kernel.
  size_t slash = jsonPath.find_last_of('/');
  spec->ptxPath = (slash == std::string::npos ? std::string()
                                              : jsonPath.substr(0, slash + 1)) +
                  spec->ptxPath;
  if (!readFile(spec->ptxPath, spec->ptx, error))
    return std::nullopt;
  if (!definesEntry(spec->ptx, spec->kernel)) {
    error = "'" + jsonPath + "' names kernel '" + spec->kernel + "', which '" +
            spec->ptxPath + "' does not define";
    return std::nullopt;
  }
  if (std::string problem = spec->entryProblem(); !problem.empty()) {
    error = "'" + jsonPath + "' and '" + spec->ptxPath + "' disagree: " +
            problem;
    return std::nullopt;
  }
  return spec;
}

/// The first integer after `directive` in `header`, or -1.
static int64_t directiveValue(const std::string &header,
                              const std::string &directive) {
  size_t at = header.find(directive);
  if (at == std::string::npos)
    return -1;
  return std::strtoll(header.c_str() + at + directive.size(), nullptr, 10);
}

int64_t KernelSpec::parameterCount() const {
  // docs/abi.md: a pointer per operand, rows and cols, a stride per input
  // and output, and the workspace of chunks kernels and column sums.
  int64_t matrices = count(KernelOperand::Role::Input) +
                     count(KernelOperand::Role::Output);
  return int64_t(operands.size()) + 2 + matrices + (blocksWait() ? 1 : 0);
}

std::string KernelSpec::entryProblem() const {
  size_t at = ptx.find(".entry " + kernel);
  size_t body = ptx.find('{', at);
  if (at == std::string::npos || body == std::string::npos)
    return "the entry has no body";
  std::string header = ptx.substr(at, body - at);
  int64_t expected = parameterCount();
  int64_t params = 0;
  for (size_t p = header.find(".param"); p != std::string::npos;
       p = header.find(".param", p + 1))
    ++params;
  if (params != expected)
    return "the kernel takes " + std::to_string(params) +
           " parameters, the metadata's operands " + std::to_string(expected);
  int64_t threads = directiveValue(header, ".reqntid ");
  if (threads < 0)
    threads = directiveValue(header, ".maxntid ");
  if (threads >= 0 && threads != blockThreads)
    return "the kernel runs at most " + std::to_string(threads) +
           " threads a block, the metadata's block_threads " +
           std::to_string(blockThreads);
  int64_t cluster = std::max<int64_t>(
      1, directiveValue(header, ".reqnctapercluster "));
  if (cluster != clusterBlocks)
    return "the kernel's cluster has " + std::to_string(cluster) +
           " blocks, the metadata's cluster_blocks " +
           std::to_string(clusterBlocks);
  return "";
}

bool KernelSpec::definesEntry(const std::string &ptx, const std::string &name) {
  // `.entry NAME(` at the start of a line, after `.visible` or `.weak`.
  for (size_t at = ptx.find(".entry " + name); at != std::string::npos;
       at = ptx.find(".entry " + name, at + 1)) {
    size_t end = at + 7 + name.size();
    if (end < ptx.size() && (ptx[end] == '(' || ptx[end] == '\n' ||
                             ptx[end] == ' ' || ptx[end] == '\r'))
      return true;
  }
  return false;
}

/// What is wrong with the launch shape `spec` describes (threads, rows per
/// block, cluster, shared memory), or "".
static std::string launchShapeProblem(const KernelSpec &spec) {
  auto powerOfTwo = [](int64_t n) { return n > 0 && (n & (n - 1)) == 0; };
  if (spec.blockThreads < 32 || spec.blockThreads > 1024 ||
      spec.blockThreads % 32 != 0)
    return "has an invalid block_threads (whole warps, at most 1024)";
  if (spec.rowsPerBlock < 1 || spec.rowsPerBlock > spec.blockThreads ||
      !powerOfTwo(spec.clusterBlocks) || spec.clusterBlocks > 16)
    return "has an invalid rows_per_block or cluster_blocks";
  if (!powerOfTwo(spec.vectorWidth) ||
      spec.vectorWidth * dtypeBytes(spec.inputType) > 16)
    return "has an invalid vector_width (a power of two of at most 16 "
           "bytes)";
  if (spec.strategy != "fused" && spec.strategy != "cluster" &&
      spec.strategy != "online" && spec.strategy != "chunks")
    return "has an unknown strategy '" + spec.strategy +
           "'; expected fused, cluster, online or chunks";
  // A fused or cluster kernel holds the whole row: it must say how long a
  // row it holds, and that row must fit its blocks.
  bool holdsRow = spec.strategy == "fused" || spec.strategy == "cluster";
  if (holdsRow && (spec.maxCols < 1 || spec.maxCols > spec.blockElements *
                                                          spec.clusterBlocks))
    return "is a " + spec.strategy + " kernel of " +
           std::to_string(spec.blockElements * spec.clusterBlocks) +
           " elements per row whose max_cols is " +
           std::to_string(spec.maxCols);
  // 227 KiB is the most shared memory a block can have on any NVIDIA GPU.
  if (spec.dynamicSharedBytes < 0 || spec.dynamicSharedBytes > 232448)
    return "has an invalid dynamic_shared_bytes";
  // Bulk keeping is a form of keep_ahead whose two buffers are the stage.
  if (spec.keepAheadBulk && (!spec.keepAhead || spec.dynamicSharedBytes == 0 ||
                             spec.dynamicSharedBytes % 2 != 0))
    return "has keep_ahead_bulk without keep_ahead and two buffers of "
           "dynamic_shared_bytes";
  return "";
}

/// What is wrong with the grid `grid` of a kernel of ABI version `abi` with
/// `spec`'s chunks, or "".
static std::string gridProblem(const std::string &grid, int64_t abi,
                               const KernelSpec &spec) {
  if (grid != "persistent" && grid != "rows" && grid != "chunks")
    return "has an unknown grid '" + grid +
           "'; expected persistent, rows or chunks";
  if (grid == "chunks" && abi < 5)
    return "is a chunks kernel of ABI version " + std::to_string(abi) +
           ", which takes a block per chunk of every row; this runner "
           "launches the resident blocks (version 5): compile it again";
  if ((grid == "chunks") != (spec.chunkElements > 0) ||
      spec.chunkElements < 0 || spec.chunkElements > (int64_t(1) << 30) ||
      (spec.chunkElements > 0 &&
       (spec.clusterBlocks > 1 || spec.rowsPerBlock > 1)))
    return "has an invalid chunk_elements: a positive chunk (at most 2^30 "
           "elements) for grid \"chunks\" (without clusters, row-split or "
           "rows per block), and none otherwise";
  if (spec.chunkEntries < 1 || spec.chunkEntries > 64)
    return "has an invalid chunk_entries: 1 to 64 entries per chunk";
  return "";
}

namespace {
/// Reads the fields of one kernel's metadata, remembering the first numeric
/// field that is not an integer of int64's range (its conversion would be
/// undefined): the parse refuses it once every field is read, or where the
/// field is required.
struct FieldReader {
  const Json &json;
  std::string notInteger;

  /// `field`'s value where it is of `kind`, or null.
  const Json *of(const char *field, Json::Kind kind) const {
    const Json *v = json.get(field);
    return v && v->kind == kind ? v : nullptr;
  }
  bool str(const char *field, std::string &out) const {
    const Json *v = of(field, Json::Kind::String);
    if (v)
      out = v->string;
    return v;
  }
  bool num(const char *field, int64_t &out) {
    const Json *v = of(field, Json::Kind::Number);
    if (!v)
      return false;
    double value = v->number;
    if (!(value >= -0x1p63 && value < 0x1p63) || value != std::trunc(value)) {
      if (notInteger.empty())
        notInteger = field;
      return false;
    }
    out = static_cast<int64_t>(value);
    return true;
  }
  bool real(const char *field, double &out) const {
    const Json *v = of(field, Json::Kind::Number);
    if (v)
      out = v->number;
    return v;
  }
  bool flag(const char *field, bool &out) const {
    const Json *v = of(field, Json::Kind::Bool);
    if (v)
      out = v->boolean;
    return v;
  }
};
} // namespace

/// The fields every version may leave out, into `spec`.
static void readOptionalFields(FieldReader &r, KernelSpec &spec) {
  r.str("chip", spec.chip);
  r.str("plan", spec.plan);
  if (double epsilon; r.real("epsilon", epsilon))
    spec.epsilon = epsilon;
  if (int64_t ignoreIndex; r.num("ignore_index", ignoreIndex))
    spec.ignoreIndex = ignoreIndex;
  if (double smoothing; r.real("label_smoothing", smoothing))
    spec.labelSmoothing = smoothing;
  r.num("min_cols", spec.minCols);
  r.num("vector_width", spec.vectorWidth);
  r.num("shared_bytes", spec.sharedBytes);
  r.num("dynamic_shared_bytes", spec.dynamicSharedBytes);
  r.num("rows_per_block", spec.rowsPerBlock);
  r.num("cluster_blocks", spec.clusterBlocks);
  if (!r.str("prefetch", spec.prefetch))
    spec.prefetch = spec.dynamicSharedBytes > 0 ? "shared" : "none";
  r.flag("peeled_path", spec.peeledPath);
  r.flag("pair_reduce", spec.pairReduce);
  r.flag("safe", spec.safe);
  r.flag("l2_hints", spec.cacheHints);
  r.flag("keep_ahead", spec.keepAhead);
  r.flag("keep_ahead_bulk", spec.keepAheadBulk);
  r.num("chunk_elements", spec.chunkElements);
  if (spec.chunkElements > 0)
    r.num("chunk_entries", spec.chunkEntries);
  r.num("max_rows", spec.maxRows);
}

std::optional<KernelSpec> KernelSpec::parse(const std::string &text,
                                            const std::string &jsonPath,
                                            std::string &error) {
  std::string parseError;
  std::optional<Json> json = Json::parse(text, parseError);
  if (!json || json->kind != Json::Kind::Object) {
    error = "'" + jsonPath + "' is not kernel metadata: " +
            (json ? "not a JSON object" : parseError);
    return std::nullopt;
  }
  FieldReader r{*json, {}};
  auto notAnInteger = [&]() {
    error = "'" + jsonPath + "' has a field '" + r.notInteger +
            "' that is not an integer";
    return std::nullopt;
  };
  auto missing = [&](const char *field) {
    if (r.notInteger == field)
      return notAnInteger();
    error =
        "'" + jsonPath + "' lacks the field '" + field + "' (see docs/abi.md)";
    return std::nullopt;
  };
  // Refuses the metadata for `problem`, a sentence about it.
  auto refuse = [&](const std::string &problem) {
    error = "'" + jsonPath + "' " + problem;
    return std::nullopt;
  };
  KernelSpec spec;
  int64_t abi = 0;
  if (!r.num("abi_version", abi))
    return missing("abi_version");
  // Version 2 added dynamic_shared_bytes (absent, hence 0, in version 1),
  // version 3 row_split and the workspace (absent, hence none, before; a
  // row_split > 1 is refused below),
  // version 4 chunks kernels (grid "chunks", chunk_elements), whose blocks
  // loop over the chunks from version 5 on.
  // Version 6 added operands (absent before: the input x and the output y),
  // version 7 chunk_entries (absent before: one entry per chunk).
  if (abi < 1 || abi > 7)
    return refuse("has ABI version " + std::to_string(abi) +
                  "; this runner knows versions 1 to 7");
  std::string in, out, ptxName;
  if (!r.str("kernel", spec.kernel))
    return missing("kernel");
  if (!r.str("ptx", ptxName))
    return missing("ptx");
  if (!r.str("op", spec.op))
    return missing("op");
  if (!r.str("strategy", spec.strategy))
    return missing("strategy");
  if (!r.str("input_type", in))
    return missing("input_type");
  if (!r.str("output_type", out))
    return missing("output_type");
  if (!r.num("block_threads", spec.blockThreads))
    return missing("block_threads");
  if (!r.num("block_elements", spec.blockElements))
    return missing("block_elements");
  if (!r.num("max_cols", spec.maxCols))
    return missing("max_cols");
  readOptionalFields(r, spec);
  // Versions 3 and 4 had row-split kernels (row_split > 1), which take a
  // workspace of their own and a cooperative launch in whole groups.
  int64_t rowSplit = 1;
  r.num("row_split", rowSplit);
  if (rowSplit != 1)
    return refuse("is a row-split kernel (row_split " +
                  std::to_string(rowSplit) +
                  "), which this runner does not launch: compile it again");
  std::string grid = "persistent";
  r.str("grid", grid);
  spec.gridPerRowGroup = grid == "rows";
  if (!readVariants(*json, spec, error))
    return refuse(error);
  if (std::string problem = gridProblem(grid, abi, spec); !problem.empty())
    return refuse(problem);
  std::optional<DType> inType = parseDType(in), outType = parseDType(out);
  if (!inType || !outType || !isFloatType(*inType) || !isFloatType(*outType))
    return refuse("names an unknown element type");
  spec.inputType = *inType;
  spec.outputType = *outType;
  if (!readOperands(*json, spec, error))
    return refuse(error);
  if (std::string problem = launchShapeProblem(spec); !problem.empty())
    return refuse(problem);
  if (!r.notInteger.empty())
    return notAnInteger();
  // The PTX file's name, next to the JSON (load reads it).
  spec.ptxPath = ptxName;
  return spec;
}

bool rowred::runtime::takesVariant(const KernelVariant &variant,
                                   const KernelSpec &variantSpec, int64_t rows,
                                   int64_t cols) {
  return rows <= variant.maxRows && variantSpec.checkShape(rows, cols).empty();
}

std::string KernelSpec::variantPath(const KernelVariant &variant) const {
  size_t slash = ptxPath.find_last_of('/');
  return (slash == std::string::npos ? std::string()
                                     : ptxPath.substr(0, slash + 1)) +
         variant.kernel + ".json";
}

int64_t KernelSpec::chunkWorkspaceBytes(int64_t rows, int64_t cols) const {
  int64_t chunks = (cols + chunkElements - 1) / chunkElements;
  return 128 + rows * (128 + (chunks * chunkEntries * 8 + 127) / 128 * 128);
}

std::string KernelSpec::describeAccess(int64_t cols, int64_t xStride,
                                       int64_t yStride, int64_t offset) const {
  std::ostringstream os;
  os << "memory access: ";
  int64_t v = vectorWidth;
  if (v <= 1) {
    os << "scalar (the kernel has no vector path)\n";
    return os.str();
  }
  // A kernel that writes only per-row results has no y to align with x.
  bool rowsOut = count(KernelOperand::Role::Output) > 0;
  if (!rowsOut)
    yStride = xStride;
  if (cols % v == 0 && xStride % v == 0 && yStride % v == 0 &&
      offset % v == 0) {
    os << "vectors of " << v
       << (rowsOut ? " (N, both row strides and both bases are "
                   : " (N, the row stride and the base are ")
       << "multiples of " << v << " elements)\n";
    return os.str();
  }
  // Both buffers start `offset` elements past an aligned address, so only
  // the strides can make rows of x and y misaligned differently.
  bool alike = (xStride - yStride) % v == 0;
  if (alike && peeledPath) {
    const char *rowsAlike = "the rows start misaligned alike in x and y";
    if (!rowsOut)
      rowsAlike = "the rows start misaligned";
    else if (count(KernelOperand::Role::Input) > 1 ||
             count(KernelOperand::Role::Output) > 1)
      rowsAlike = "the rows start misaligned alike in every input and output";
    os << "vectors of " << v << " between a scalar head and tail per row ("
       << rowsAlike << ")\n";
    return os.str();
  }
  os << "scalar (";
  if (!alike)
    os << "the row strides " << xStride << " and " << yStride
       << " differ modulo " << v;
  else
    os << "rows not aligned for vectors, and the kernel has no peeled path";
  os << ")\n";
  return os.str();
}

std::string KernelSpec::describe() const {
  std::ostringstream os;
  int64_t rowThreads = blockThreads / rowsPerBlock;
  bool rowsOut = count(KernelOperand::Role::Output) > 0;
  os << "strategy: " << strategy << " (" << dtypeName(inputType) << " -> "
     << (rowsOut ? dtypeName(outputType) : "per-row results") << "), "
     << blockElements << " elements per "
     << (strategy == "online" ? "tile" : "block") << ", "
     << blockElements / rowThreads << " per thread in vectors of "
     << vectorWidth;
  if (rowsPerBlock > 1)
    os << ", " << rowsPerBlock << " rows per block";
  if (clusterBlocks > 1)
    os << ", rows split over clusters of " << clusterBlocks << " blocks";
  if (chunkElements > blockElements)
    os << ", rows cut into chunks of " << chunkElements << " (" << blockElements
       << " in registers, " << chunkElements - blockElements
       << " bulk-copied into shared memory)";
  else if (chunkElements > 0)
    os << ", rows cut into chunks of " << chunkElements << " in registers";
  if (chunkElements > 0)
    os << ", taken by ticket by blocks resident together and combining "
          "through global memory";
  if (pairReduce)
    os << ", one (max, sum) exchange per row";
  // The online kernel loads ahead into registers tile by tile (with the
  // second pass reversed, also across its passes and into the next row).
  bool tiles = strategy == "online" && prefetch == "registers";
  // With one block per row the online kernel's stage holds the block's own
  // row's share, copied in before its first pass (a staged row).
  if (strategy == "online" && prefetch == "shared" && gridPerRowGroup)
    os << "; the block's share of its row staged whole in shared memory "
          "(cp.async) before pass 1, both passes reading it there";
  else if (chunkElements == 0)
    os << "; next " << (tiles ? "tile" : "row") << " fetched ahead: "
       << (prefetch == "shared"      ? "into shared memory (cp.async)"
           : prefetch == "registers" ? "into registers"
                                     : "no");
  if (strategy == "online" && prefetch != "shared" && dynamicSharedBytes > 0)
    os << "; " << dynamicSharedBytes / (keepAheadBulk ? 2 : 1) / 1024
       << " KiB of each block's share kept in shared memory between the "
          "passes"
       << (keepAheadBulk ? ", in two buffers by turns, copied in by one "
                           "bulk copy (cp.async.bulk) during the previous "
                           "row"
           : keepAhead   ? ", copied in (cp.async) during the previous row's "
                           "second pass"
                         : "");
  if (cacheHints)
    os << "; L2 hints: pass 1 evict-last, pass 2 evict-first";
  os << "\n";
  return os.str();
}

std::string KernelSpec::checkShape(int64_t rows, int64_t cols) const {
  if (rows < 0 || cols < 1)
    return "a problem has at least one column and no negative rows, not " +
           std::to_string(rows) + " x " + std::to_string(cols);
  if (cols < minCols || (maxCols && cols > maxCols))
    return "kernel '" + kernel + "' (" + strategy + ") handles " +
           std::to_string(minCols) + " to " + std::to_string(maxCols) +
           " columns, not " + std::to_string(cols) +
           "; compile one for longer rows (cols=N) or with strategy=online";
  if (cols > INT32_MAX)
    return "rows of " + std::to_string(cols) +
           " columns are too long: the kernels take N < 2^31";
  // A chunks kernel counts its tickets and columns in 32 bits.
  if (chunkElements > 0) {
    int64_t chunks = (cols + chunkElements - 1) / chunkElements;
    if (cols + chunkElements > INT32_MAX || rows * chunks > INT32_MAX)
      return "kernel '" + kernel + "' (chunks of " +
             std::to_string(chunkElements) +
             ") handles rows x chunks and columns + a chunk below 2^31, not " +
             std::to_string(rows) + " x " + std::to_string(chunks) +
             " chunks of rows of " + std::to_string(cols);
  }
  return "";
}
