/*===- rowred_runtime.h - C API of the rowred kernel runtime ------*- C -*-===*\
|*                                                                            *|
|* Part of the softmax kernel compiler.                                       *|
|*                                                                            *|
|* Loads kernels compiled by softmax-opt (their <kernel>.json metadata and    *|
|* <kernel>.ptx) into the calling thread's current CUDA context and launches  *|
|* them on a caller's stream, with the grid derived from the driver's         *|
|* occupancy query (docs/abi.md, docs/runner.md). Functions return 0 on       *|
|* success; on failure they return non-zero (or NULL, or -1 for counts and    *|
|* lengths) and rowred_last_error() describes the failure on the calling      *|
|* thread, a NULL kernel or result address included. Nothing is printed and  *|
|* the process never exits.                                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef ROWRED_RUNTIME_H
#define ROWRED_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ROWRED_RUNTIME_API __attribute__((visibility("default")))
#else
#define ROWRED_RUNTIME_API
#endif

/* The kernel ABI this runtime launches (the metadata's abi_version). */
#define ROWRED_RUNTIME_ABI_VERSION 7

/* A loaded kernel. */
typedef struct rowred_kernel rowred_kernel;

/* The kernel ABI version of this library, ROWRED_RUNTIME_ABI_VERSION. */
ROWRED_RUNTIME_API int rowred_runtime_abi_version(void);

/* The message of the calling thread's last failure ("" when none). */
ROWRED_RUNTIME_API const char *rowred_last_error(void);

/* Loads the kernel described by `metadata_path` (and the variants it lists
   for launches of a few rows, from next to it; docs/abi.md) into the
   primary context of
   CUDA device `device` (the context PyTorch and the CUDA runtime use), or,
   with `device` -1, into the calling thread's current context; NULL on
   failure. Launches make that context current on their thread. */
ROWRED_RUNTIME_API rowred_kernel *rowred_kernel_load(const char *metadata_path,
                                                     int device);

/* Unloads the kernel (in the context it was loaded into). NULL is a no-op. */
ROWRED_RUNTIME_API void rowred_kernel_unload(rowred_kernel *kernel);

/* The kernel's entry point, op ("softmax", "rms_norm", ...) and the element
   types of its first input and output ("f32", "f16", "bf16"), and the row
   lengths it takes (max_cols 0: any). */
ROWRED_RUNTIME_API const char *rowred_kernel_name(const rowred_kernel *kernel);
ROWRED_RUNTIME_API const char *rowred_kernel_op(const rowred_kernel *kernel);
ROWRED_RUNTIME_API const char *
rowred_kernel_input_type(const rowred_kernel *kernel);
ROWRED_RUNTIME_API const char *
rowred_kernel_output_type(const rowred_kernel *kernel);
ROWRED_RUNTIME_API int64_t rowred_kernel_min_cols(const rowred_kernel *kernel);
ROWRED_RUNTIME_API int64_t rowred_kernel_max_cols(const rowred_kernel *kernel);

/* A kernel with variants launches the first for at least `rows` rows that
   takes rows of `cols` in its place (grid, launch and launch_grid below
   describe and start that one); occupancy and the names above are the
   kernel's own. */

/* Bytes of zeroed workspace a launch over rows x cols needs (0: none),
   whichever of the kernel and its variants it takes;
   each launch leaves it zero, so one workspace serves the launches of one
   stream in turn. */
ROWRED_RUNTIME_API int
rowred_kernel_workspace_bytes(const rowred_kernel *kernel, int64_t rows,
                              int64_t cols, uint64_t *bytes);

/* The grid (blocks) a launch over rows x cols would start. */
ROWRED_RUNTIME_API int rowred_kernel_grid(const rowred_kernel *kernel,
                                          int64_t rows, int64_t cols,
                                          int64_t *blocks);

/* Resident blocks per SM and on the whole device, and for cluster kernels
   the clusters resident at once (else 0), from the driver's occupancy
   queries. */
ROWRED_RUNTIME_API int rowred_kernel_occupancy(const rowred_kernel *kernel,
                                               int *blocks_per_sm,
                                               int64_t *resident_blocks,
                                               int64_t *resident_clusters);

/* Launches y = op(x) of a kernel of one input and one output (softmax,
   log_softmax) over `rows` rows of `cols` elements on `stream` (a
   CUstream; NULL for the default stream), asynchronously. `x` and `y` are
   device addresses, the row strides are in elements (at least cols), and
   `workspace` is a zeroed device buffer of rowred_kernel_workspace_bytes
   (0 when that is 0). */
ROWRED_RUNTIME_API int rowred_kernel_launch(const rowred_kernel *kernel,
                                            void *stream, uint64_t x,
                                            uint64_t y, int64_t rows,
                                            int64_t cols, int64_t x_row_stride,
                                            int64_t y_row_stride,
                                            uint64_t workspace);

/* rowred_kernel_launch on `grid` blocks instead of the derived grid: any
   positive multiple of the cluster size, and for kernels whose blocks wait
   for each other (chunks) from one row's chunks to the resident blocks. For
   tests and tuning; the derived grid is the fast one. */
ROWRED_RUNTIME_API int
rowred_kernel_launch_grid(const rowred_kernel *kernel, void *stream, uint64_t x,
                          uint64_t y, int64_t rows, int64_t cols,
                          int64_t x_row_stride, int64_t y_row_stride,
                          uint64_t workspace, int64_t grid);

/* The kernel's operands (docs/abi.md): how many, and operand `index`'s name
   ("x", "w", ...), role ("input", "output" or "column": one element per
   column) and element type. Softmax kernels have two: x and y. The strings
   live as long as the kernel. */
ROWRED_RUNTIME_API int rowred_kernel_num_operands(const rowred_kernel *kernel);
ROWRED_RUNTIME_API int rowred_kernel_operand(const rowred_kernel *kernel,
                                             int index, const char **name,
                                             const char **role,
                                             const char **type);

/* Launches the kernel over `rows` rows of `cols` elements on `stream`,
   asynchronously: `operands` holds the device address of each operand in
   the kernel's order, `row_strides` the row stride (elements, at least
   cols) of each input and output in the same order, `workspace` as for
   rowred_kernel_launch, `grid` 0 for the derived grid or a number of blocks
   as for rowred_kernel_launch_grid. */
ROWRED_RUNTIME_API int rowred_kernel_launch_operands(
    const rowred_kernel *kernel, void *stream, const uint64_t *operands,
    int num_operands, const int64_t *row_strides, int num_strides, int64_t rows,
    int64_t cols, uint64_t workspace, int64_t grid);

/* Whether work submitted to `stream` (a CUstream; NULL: the legacy default
   stream) is being captured into a CUDA graph: *capturing is 1 while a
   capture is active or invalidated, else 0. Callers that keep a buffer
   across launches (a workspace) give a captured launch one of its own. Like
   any driver query, it needs a context current on the calling thread (a new
   thread has none until a CUDA runtime call or cuCtxSetCurrent makes one). */
ROWRED_RUNTIME_API int rowred_stream_capturing(void *stream, int *capturing);

#ifdef __cplusplus
}
#endif

#endif /* ROWRED_RUNTIME_H */
