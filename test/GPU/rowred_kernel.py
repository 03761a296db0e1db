"""Loads one generated kernel (.ptx + .json) and launches it through the
rowred runtime (runtime/, through the Python package's binding), so that the
GPU suite (test/GPU/check_kernels.py) and the benchmarks (bench/bench.py,
bench/sweep.py) launch every kernel by the same rules as softmax-run and
the PyTorch ops (docs/abi.md): the grid from the driver's occupancy query,
clusters co-resident, one program per row group for `grid` "rows",
cooperative launches of chunks kernels with a zeroed workspace.

The harnesses choose other grids only to test or measure them (a small
grid whose programs take several rows each, the balanced grid of the
sweep); the runtime checks that the kernel can run on them.
"""
import json
import os
import re
import sys
import zlib

import cupy as cp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from rowred import _runtime  # noqa: E402


def named_cols(meta_file, meta):
    """N a benchmark runs a kernel on: `_n<N>_` in its metadata file's name
    (gen_kernels.py's `cols=N` variants), else its max_cols (0 when the
    kernel takes any N)."""
    found = re.search(r"_n(\d+)_", meta_file)
    return int(found.group(1)) if found else meta["max_cols"]


class Kernel:
    def __init__(self, directory, meta_file):
        self.meta_file = meta_file
        path = os.path.join(directory, meta_file)
        with open(path) as f:
            self.meta = json.load(f)
        self.name = self.meta["kernel"]
        self.runtime = _runtime.Kernel(path, cp.cuda.Device().id)
        self.threads = self.meta["block_threads"]
        self.rows_per_block = self.meta.get("rows_per_block", 1)
        self.cluster = self.meta.get("cluster_blocks", 1)
        self.dynamic_shared = self.meta.get("dynamic_shared_bytes", 0)
        self.sms = cp.cuda.Device().attributes["MultiProcessorCount"]
        self.per_sm, self.resident, clusters = self.runtime.occupancy()
        if self.cluster > 1:
            # Whole clusters co-resident, as the runtime's derived grid.
            self.resident = self.cluster * clusters
        self.workspace = None
        self.chunk = self.meta.get("chunk_elements", 0)
        # The kernels that launches of a few rows take instead (docs/abi.md),
        # by their rows: (max_rows, metadata).
        self.variants = []
        for v in sorted(self.meta.get("variants", []),
                        key=lambda v: v["max_rows"]):
            with open(os.path.join(directory, v["kernel"] + ".json")) as f:
                self.variants.append((v["max_rows"], json.load(f)))

    def rng(self):
        """A random generator seeded by the kernel's name, so that a harness
        draws a kernel's data alike whichever kernels it checks with it."""
        return cp.random.default_rng(zlib.crc32(self.name.encode()))

    def taken(self, rows, cols):
        """The metadata of the kernel a launch of `rows` x `cols` takes: the
        first variant for at least `rows` rows that takes rows of `cols`,
        else this kernel's (the runtime's Kernel::forShape)."""
        for max_rows, meta in self.variants:
            if rows <= max_rows and meta.get("min_cols", 1) <= cols and \
                    (meta["max_cols"] == 0 or cols <= meta["max_cols"]):
                return meta
        return self.meta

    def chunks_per_row(self, cols):
        """Chunks of a chunks kernel's row of `cols` elements."""
        return -(-cols // self.chunk)

    def chunk_workspace(self, rows, cols):
        """A chunks kernel's workspace for `rows` rows of `cols`: zeroed
        when allocated, reused while large enough (each launch leaves it
        zero)."""
        size = self.runtime.workspace_bytes(rows, cols)
        if self.workspace is None or self.workspace.size < size:
            self.workspace = cp.zeros(size, cp.uint8)
        return self.workspace

    def waits(self):
        """Whether the kernel's blocks wait for each other (a row's chunks):
        the runtime launches it cooperatively."""
        return self.chunk > 0

    def min_chunks_grid(self, cols):
        """The fewest blocks a chunks kernel runs rows of `cols` on: one per
        chunk of a row, all resident at once; refused when they do not fit."""
        chunks = self.chunks_per_row(cols)
        if chunks > self.resident:
            raise RuntimeError(
                f"{self.name}: rows of {cols} take {chunks} chunks, more "
                f"than the {self.resident} blocks resident at once")
        return chunks

    def grid(self, rows, balanced=False, cols=None):
        """The runtime's grid for `rows` rows of `cols`. `balanced` (an
        experiment, not the ABI's rule) takes the fewest programs that still
        need the same number of rounds, so that none idles in the last
        one."""
        grid = self.runtime.grid(max(rows, 1), cols or self.meta["max_cols"]
                                 or 1)
        if not balanced or self.chunk or self.meta.get("grid") == "rows":
            return grid
        groups = -(-rows // self.rows_per_block)
        programs = grid // self.cluster
        programs = -(-groups // -(-groups // programs))
        return self.cluster * programs

    def small_grid(self, rows, cols=None):
        """A grid of at most 3 programs (blocks or clusters) of the kernel
        the launch takes, so that each handles several rows (for a chunks
        kernel, one block per chunk of a row, so that each takes several)."""
        meta = self.taken(rows, cols or self.meta["max_cols"] or 1)
        if meta is not self.meta and meta.get("chunk_elements", 0):
            # A variant of smaller chunks: one block per chunk of its own.
            return -(-cols // meta["chunk_elements"])
        if meta is not self.meta:
            cluster = meta.get("cluster_blocks", 1)
            groups = -(-rows // meta.get("rows_per_block", 1))
            return max(min(groups, 3), 1) * cluster
        if self.chunk:
            return self.min_chunks_grid(cols)
        programs = min(-(-rows // self.rows_per_block), 3,
                       self.resident // self.cluster)
        return max(programs, 1) * self.cluster

    def workspace_for(self, rows, cols):
        """The address of the zeroed workspace a launch over rows x cols
        takes (chunks kernels, column sums), or 0."""
        if self.runtime.workspace_bytes(rows, cols) == 0:
            return 0
        return self.chunk_workspace(rows, cols).data.ptr

    def launch(self, x, y, rows, cols, sx, sy, grid=None):
        """Launches on CuPy's current stream through the runtime, on the
        derived grid or on `grid` blocks."""
        workspace = self.workspace_for(rows, cols)
        self.runtime.launch(cp.cuda.get_current_stream().ptr, x, y, rows,
                            cols, sx, sy, workspace, grid)

    def launch_operands(self, pointers, row_strides, rows, cols, grid=None):
        """Launches a kernel of any operands (docs/abi.md: one address per
        operand, one row stride per input and output) on CuPy's current
        stream, with the workspace the kernel takes."""
        workspace = self.workspace_for(rows, cols)
        self.runtime.launch_operands(cp.cuda.get_current_stream().ptr,
                                     pointers, row_strides, rows, cols,
                                     workspace, grid)
