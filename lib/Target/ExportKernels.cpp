//===- ExportKernels.cpp - Write PTX and launch metadata ------------------===//
//
// Part of the softmax kernel compiler.
//
//===----------------------------------------------------------------------===//

#include "rowred/Conversion/RowRedToGPU/RowRedToGPU.h"
#include "rowred/Target/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace rowred {
#define GEN_PASS_DEF_ROWREDEXPORTKERNELS
#include "rowred/Target/Passes.h.inc"
} // namespace rowred
} // namespace mlir

using namespace mlir;
using namespace mlir::rowred;

/// Version of the kernel ABI and metadata format in docs/abi.md.
static constexpr int64_t kAbiVersion = 7;

/// Converts a metadata entry to JSON: strings, booleans, integers, floats,
/// arrays and dictionaries of them; anything else as its IR text.
static llvm::json::Value toJSON(Attribute attr) {
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue().str();
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto array = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array values;
    for (Attribute element : array)
      values.push_back(toJSON(element));
    return values;
  }
  if (auto dict = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object object;
    for (NamedAttribute entry : dict)
      object[entry.getName().strref()] = toJSON(entry.getValue());
    return object;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

/// The kernel parameters, in order (docs/abi.md), from its `operands`: a
/// pointer per operand, rows, cols, a row stride per 2-D input and output,
/// and for chunks kernels and those with column sums or totals their
/// workspace.
static llvm::json::Array abiParams(ArrayAttr operands, bool chunks) {
  // json::Value keeps StringRefs unowned: pass owned strings.
  auto param = [](std::string name, std::string type, std::string meaning) {
    return llvm::json::Object{{"name", std::move(name)},
                              {"type", std::move(type)},
                              {"meaning", std::move(meaning)}};
  };
  llvm::json::Array params, strides;
  bool sums = false;
  for (auto operand : operands.getAsRange<DictionaryAttr>()) {
    std::string name = operand.getAs<StringAttr>("name").str();
    std::string type = operand.getAs<StringAttr>("type").str();
    StringRef role = operand.getAs<StringAttr>("role").getValue();
    if (role == "column") {
      params.push_back(param(name, "const " + type + " *",
                             "per-column operand, global memory, cols "
                             "contiguous elements"));
      continue;
    }
    if (role == "column_sum" || role == "total") {
      sums = true;
      params.push_back(
          param(name, type + " *",
                role == "total"
                    ? "total over the rows, global memory, one element"
                    : "sums down the columns, global memory, cols contiguous "
                      "elements"));
      continue;
    }
    if (role == "row" || role == "row_output") {
      bool read = role == "row";
      params.push_back(param(name, (read ? "const " : "") + type + " *",
                             (read ? "per-row input" : "per-row output") +
                                 std::string(", global memory, rows "
                                             "contiguous elements (row i at " +
                                             name + "[i])")));
      continue;
    }
    bool input = role == "input";
    params.push_back(param(name, (input ? "const " : "") + type + " *",
                           (role + ", global memory, row i at " + name +
                            " + i * " + name + "_row_stride")
                               .str()));
    strides.push_back(param(name + "_row_stride", "int64",
                            "elements between rows of " + name));
  }
  params.push_back(param("rows", "int64", "number of rows (M)"));
  params.push_back(
      param("cols", "int64", "number of columns (N), 1 <= N < 2^31"));
  for (llvm::json::Value &stride : strides)
    params.push_back(std::move(stride));
  if (chunks)
    params.push_back(param(
        "workspace", "uint8 *",
        "global memory of 128 + rows * (128 + alignTo(8 * ceil(cols / "
        "chunk_elements), 128)) bytes, zero before the first launch; each "
        "launch leaves it zero"));
  if (sums)
    params.push_back(param(
        "workspace", "uint8 *",
        "global memory of 128 + grid * 4 * (cols * column sums + totals) "
        "bytes, zero before the first launch; each launch leaves its first "
        "128 bytes zero"));
  return params;
}

/// Writes `contents` to `path`, reporting failures on `loc`.
static LogicalResult writeFile(Location loc, StringRef path,
                               StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return emitError(loc) << "cannot write '" << path << "': " << ec.message();
  os << contents;
  os.close();
  if (os.has_error())
    return emitError(loc) << "cannot write '" << path
                          << "': " << os.error().message();
  return success();
}

namespace {
/// Writes `<kernel>.ptx` and `<kernel>.json` for every rowred kernel binary.
struct RowRedExportKernelsPass
    : rowred::impl::RowRedExportKernelsBase<RowRedExportKernelsPass> {
  using Base::Base;

  // Errors are emitted at the ops' locations, not on the ops: their dump
  // would print every kernel's PTX (tens of KB each).
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module->getAttrOfType<DictionaryAttr>(kKernelsAttrName);
    if (!kernels) {
      emitError(module.getLoc()) << "no rowred kernels to export: run "
                                    "convert-rowred-to-gpu first";
      return signalPassFailure();
    }
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir)) {
      emitError(module.getLoc()) << "cannot create output directory '"
                                 << outputDir << "': " << ec.message();
      return signalPassFailure();
    }
    unsigned written = 0;
    for (auto binary : module.getOps<gpu::BinaryOp>()) {
      auto metadata = kernels.getAs<DictionaryAttr>(binary.getSymName());
      if (!metadata)
        continue;
      if (failed(exportBinary(binary, metadata)))
        return signalPassFailure();
      ++written;
    }
    if (written != kernels.size()) {
      emitError(module.getLoc())
          << "expected a gpu.binary for each of the " << kernels.size()
          << " rowred kernels, found " << written
          << ": run gpu-module-to-binary first";
      return signalPassFailure();
    }
  }

  LogicalResult exportBinary(gpu::BinaryOp binary, DictionaryAttr metadata) {
    if (binary.getObjects().size() != 1)
      return emitError(binary.getLoc())
             << "expected one object per kernel binary";
    auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    if (object.getFormat() != gpu::CompilationTarget::Assembly)
      return emitError(binary.getLoc()) << "holds no PTX text: compile with "
                                           "gpu-module-to-binary{format=isa}";
    StringRef name = binary.getSymName();
    SmallString<128> ptxPath(outputDir), jsonPath(outputDir);
    llvm::sys::path::append(ptxPath, name + ".ptx");
    llvm::sys::path::append(jsonPath, name + ".json");
    if (failed(
            writeFile(binary.getLoc(), ptxPath, object.getObject().getValue())))
      return failure();

    llvm::json::Object json;
    json["abi_version"] = kAbiVersion;
    json["kernel"] = name.str();
    json["ptx"] = (name + ".ptx").str();
    if (auto target = dyn_cast<NVVM::NVVMTargetAttr>(object.getTarget()))
      json["chip"] = target.getChip().str();
    for (NamedAttribute entry : metadata)
      json[entry.getName().strref()] = toJSON(entry.getValue());
    auto chunk = metadata.getAs<IntegerAttr>("chunk_elements");
    json["params"] = abiParams(metadata.getAs<ArrayAttr>("operands"),
                               chunk && chunk.getInt() > 0);
    std::string text;
    llvm::raw_string_ostream os(text);
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(json))) << "\n";
    return writeFile(binary.getLoc(), jsonPath, text);
  }
};
} // namespace
