//===- KernelSpec.h - Kernel launch metadata --------------------*- C++ -*-===//
//
// Part of the softmax kernel compiler.
//
// Reads the <kernel>.json written by rowred-export-kernels (docs/abi.md).
// The runner-only build has no LLVM, so this holds its own small JSON reader.
//
//===----------------------------------------------------------------------===//

#ifndef ROWRED_RUNTIME_KERNELSPEC_H
#define ROWRED_RUNTIME_KERNELSPEC_H

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rowred::runtime {

/// A parsed JSON value (null, bool, number, string, array or object).
struct Json {
  enum class Kind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object
  } kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::map<std::string, Json> object;

  /// Parses `text`; on failure returns nullopt and sets `error` (with the
  /// offset of the problem).
  static std::optional<Json> parse(const std::string &text, std::string &error);
  const Json *get(const std::string &key) const;
};

/// Element types the kernels read and write: floating-point rows, scalars
/// and per-column operands, and integer per-row inputs (labels).
enum class DType { F32, F16, BF16, I32, I64 };

std::optional<DType> parseDType(const std::string &name);
/// Whether `type` is f32, f16 or bf16 (the types of rows).
bool isFloatType(DType type);
const char *dtypeName(DType type);
int dtypeBytes(DType type);

/// One operand of a kernel, in parameter order (docs/abi.md).
struct KernelOperand {
  /// What the kernel does with it: reads rows of it, writes rows of it,
  /// reads one element per column, reads one element per row (labels),
  /// writes one element per row (a loss, a logsumexp), or writes one
  /// element per column, a sum over the rows (a weight's gradient).
  enum class Role { Input, Output, Column, Row, RowOutput, ColumnSum, Total };
  std::string name;
  Role role = Role::Input;
  DType type = DType::F32;
};

const char *roleName(KernelOperand::Role role);

/// A second kernel of the same operands that launches of at most `maxRows`
/// rows take instead (metadata `variants`; its metadata is
/// `<kernel>.json`, next to the first's).
struct KernelVariant {
  std::string kernel;
  int64_t maxRows = 0;
};

struct KernelSpec;
/// Whether a launch of `rows` x `cols` takes `variant`, whose metadata is
/// `variantSpec`: at most its rows, of a length it takes.
bool takesVariant(const KernelVariant &variant, const KernelSpec &variantSpec,
                  int64_t rows, int64_t cols);

/// What softmax-run needs to know about a kernel (docs/abi.md).
struct KernelSpec {
  std::string kernel;   ///< PTX entry point.
  std::string ptxPath;  ///< Resolved path of the PTX file (parse: its name).
  std::string ptx;      ///< The PTX text.
  std::string op;       ///< softmax, log_softmax, rms_norm, ... or custom.
  /// The normalizations' epsilon (metadata `epsilon`; absent for others).
  std::optional<double> epsilon;
  /// Cross-entropy's parameters (metadata `ignore_index` and
  /// `label_smoothing`; absent for other ops).
  std::optional<int64_t> ignoreIndex;
  std::optional<double> labelSmoothing;
  /// A safe softmax or log_softmax: rows of -inf give zeros (metadata
  /// `safe`).
  bool safe = false;
  std::string strategy; ///< fused | cluster | online.
  std::string chip;
  /// The #rowred.plan the compiler chose, as IR text (empty in metadata
  /// written before plans).
  std::string plan;
  DType inputType = DType::F32, outputType = DType::F32;
  /// The operands: the inputs, then the outputs, then the per-column
  /// operands (version 6; before, the input x and the output y).
  std::vector<KernelOperand> operands;
  /// Operands of `role`.
  int64_t count(KernelOperand::Role role) const;
  int64_t blockThreads = 0, blockElements = 0, vectorWidth = 1;
  int64_t sharedBytes = 0, minCols = 1, maxCols = 0;
  /// Dynamic shared memory every launch must provide (the prefetch stage or
  /// the online kernel's kept tiles).
  int64_t dynamicSharedBytes = 0;
  /// Rows one block works on at once; blocks per cluster (a compiled-in
  /// cluster size: the grid must be a multiple of it).
  int64_t rowsPerBlock = 1, clusterBlocks = 1;
  /// How a block fetches its next row during the current one: shared (the
  /// stage), registers or none.
  std::string prefetch = "none";
  /// Whether rows misaligned alike in every input and output take vectors
  /// between a scalar head and tail (the peeled path) rather than scalar
  /// accesses.
  bool peeledPath = false;
  /// Whether a row's reductions combine (max, sum) pairs in one exchange.
  bool pairReduce = false;
  /// Whether the online kernel's accesses carry L2 eviction hints.
  bool cacheHints = false;
  /// Online: the kept tiles are copied in ahead (keep_ahead).
  bool keepAhead = false;
  /// Online: they are copied in by one bulk copy per row into two buffers
  /// (keep_ahead = bulk); dynamicSharedBytes holds both.
  bool keepAheadBulk = false;
  /// The launcher starts one program (block, cluster) per row group (`grid`
  /// "rows") instead of the persistent grid ("persistent", the default when
  /// absent). Either grid computes the same result.
  bool gridPerRowGroup = false;
  /// Chunks kernels (version 4, `grid` "chunks"): elements of each chunk;
  /// the launcher starts one block per chunk of every row and passes a
  /// zeroed workspace of chunkWorkspaceBytes; 0 for other kernels.
  int64_t chunkElements = 0;
  /// Chunks kernels: the 8-byte entries each chunk publishes in its row's
  /// record of the workspace (version 7; one before).
  int64_t chunkEntries = 1;
  /// The most rows of a launch the compiler chose this kernel for (0:
  /// any); a variant of another kernel.
  int64_t maxRows = 0;
  /// The kernels that launches of a few rows take instead, by maxRows.
  std::vector<KernelVariant> variants;

  /// Whether blocks of the kernel wait for each other (a row's chunks), so
  /// that a launch must make them resident together: a cooperative launch
  /// of at most the resident blocks.
  bool blocksWait() const { return chunkElements > 0 || hasColumnSums(); }

  /// Whether the kernel sums down the columns or over the rows (column
  /// sums, totals): its blocks meet at a grid barrier in its workspace.
  bool hasColumnSums() const {
    return count(KernelOperand::Role::ColumnSum) +
               count(KernelOperand::Role::Total) >
           0;
  }

  /// Bytes of the workspace of a kernel with column sums (docs/abi.md) on
  /// a grid of `grid` blocks over rows of `cols` elements: the grid
  /// barrier's 128 bytes, then a partial row of f32 per block and sum, then
  /// an f32 per block and total.
  int64_t columnSumsWorkspaceBytes(int64_t grid, int64_t cols) const {
    return 128 + grid * cols * 4 * count(KernelOperand::Role::ColumnSum) +
           grid * 4 * count(KernelOperand::Role::Total);
  }

  /// Bytes of a chunks kernel's workspace for `rows` rows of `cols`
  /// elements (docs/abi.md): the ticket's 128, then per row 128 of counter
  /// and its chunks' chunkEntries 8-byte entries each, rounded up to 128.
  int64_t chunkWorkspaceBytes(int64_t rows, int64_t cols) const;

  /// The metadata path of `variant`, next to this kernel's PTX (after
  /// load).
  std::string variantPath(const KernelVariant &variant) const;

  /// Why the kernel cannot take `rows` rows of `cols` elements (the row
  /// lengths it was compiled for, the ABI's 32-bit limits), or empty.
  std::string checkShape(int64_t rows, int64_t cols) const;

  /// One line for --explain: the strategy and block shape the compiler chose.
  std::string describe() const;
  /// One line for --explain: which of the kernel's paths rows of `cols`
  /// elements with row strides `xStride` and `yStride` take, with both
  /// buffers `offset` elements past an aligned address (the kernel decides
  /// at run time; docs/abi.md).
  std::string describeAccess(int64_t cols, int64_t xStride, int64_t yStride,
                             int64_t offset) const;

  /// Loads `<jsonPath>` and the PTX it names, which must define the kernel.
  /// On failure returns nullopt and sets `error`.
  static std::optional<KernelSpec> load(const std::string &jsonPath,
                                        std::string &error);

  /// Reads the metadata `text` of `<jsonPath>` (named in messages), with
  /// every field checked; `ptxPath` is the PTX file's name as written there
  /// and `ptx` is empty (load reads it). On failure returns nullopt and sets
  /// `error`.
  static std::optional<KernelSpec> parse(const std::string &text,
                                         const std::string &jsonPath,
                                         std::string &error);

  /// Whether `ptx` defines the kernel entry `name`.
  static bool definesEntry(const std::string &ptx, const std::string &name);

  /// The kernel's parameters (docs/abi.md).
  int64_t parameterCount() const;

  /// Where the entry `kernel` of `ptx` disagrees with the metadata (its
  /// parameters against the operands, its threads against block_threads,
  /// its cluster against cluster_blocks), or "".
  std::string entryProblem() const;
};

/// Reads a whole file; false (with `error`) when it cannot or when it is
/// not a regular file (isRegularFile).
bool readFile(const std::string &path, std::string &contents,
              std::string &error);

/// Whether `path` names a regular file, which has an end to read to (not a
/// device such as /dev/zero, a pipe or a directory); else false with
/// `error`.
bool isRegularFile(const std::string &path, std::string &error);

} // namespace rowred::runtime

#endif // ROWRED_RUNTIME_KERNELSPEC_H
