# Sourced by the scripts that run the sanitized build (scripts/
# build-sanitized.sh): the sanitizers' options, unless the caller set them.
# allow_user_poisoning=0: LLVM's headers poison the memory of their
# allocators when compiled with ASan, which the uninstrumented LLVM libraries
# then use without unpoisoning it (false use-after-poison reports).
export ASAN_OPTIONS=${ASAN_OPTIONS:-allow_user_poisoning=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
