# -*- Python -*-
# lit configuration for the softmax kernel compiler.

import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "SOFTMAX"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "fuzz", "lib", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.softmax_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%src_root", config.softmax_src_root))
config.substitutions.append(("%python", config.python_executable))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
# `not`, `count` and `split-file` are run from the LLVM tools directory.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tool_dirs = [config.softmax_tools_dir, config.llvm_tools_dir]
tools = [ToolSubst("softmax-opt", unresolved="fatal")]
# softmax-run is built only where the CUDA toolkit's headers are.
if os.path.exists(os.path.join(config.softmax_tools_dir, "softmax-run")):
    config.available_features.add("softmax-run")
    tools.append(ToolSubst("softmax-run", unresolved="fatal"))
llvm_config.add_tool_substitutions(tools, tool_dirs)

# A usable GPU changes what softmax-run does; its no-GPU tests skip there.
nvidia_smi = shutil.which("nvidia-smi")
if nvidia_smi and os.system(nvidia_smi + " -L > /dev/null 2>&1") == 0:
    config.available_features.add("gpu")

# ptxas backs the register and spill checks of the generated PTX.
if config.ptxas_executable and os.path.exists(config.ptxas_executable):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas_executable))
