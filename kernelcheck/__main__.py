"""``python -m kernelcheck``: the same command line as ``kernelcheck``."""

import sys

from kernelcheck.cli import main

if __name__ == "__main__":
    sys.exit(main())
