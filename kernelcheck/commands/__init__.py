"""Sub-commands of the ``kernelcheck`` command line, one module each."""
