"""The kernels of a directory written by scripts/gen_kernels.py."""
import json
import os
import re
import sys


def load_manifest(kernel_dir, match=None):
    """The metadata files KERNEL_DIR/manifest.json lists, those whose name
    matches the regular expression `match` when given; exits with status 2
    when none does."""
    with open(os.path.join(kernel_dir, "manifest.json")) as f:
        manifest = json.load(f)
    if match:
        manifest = [k for k in manifest if re.search(match, k)]
        if not manifest:
            print(f"error: no kernel of {kernel_dir} matches '{match}'",
                  file=sys.stderr)
            sys.exit(2)
    return manifest
