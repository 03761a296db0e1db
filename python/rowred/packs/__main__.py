"""`python3 -m rowred.packs build ...`: the command line of rowred.packs.

A module of its own, so that running it does not execute rowred.packs a
second time (the package `rowred` imports rowred.packs).
"""
import sys

from . import main

sys.exit(main())
