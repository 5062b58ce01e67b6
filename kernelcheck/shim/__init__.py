"""Launch-time validation: the driver interception shim and its Python side.

* :mod:`kernelcheck.shim.build` compiles ``libkernelcheck_preload.so`` (the C sources in this
  directory) and the stand-in ``libcuda.so.1`` on first use;
* :mod:`kernelcheck.shim.helper` is the analysis helper process: it analyses the module
  images the shim spools and writes the results to the cache (:mod:`kernelcheck.cache`);
* :mod:`kernelcheck.shim.launcher` runs a command under the shim (``kernelcheck run``) and
  :mod:`kernelcheck.shim.report` merges and prints what the shim counted;
* :mod:`kernelcheck.shim.native` calls the C LaunchCheck evaluator from Python.

docs/shim.md describes the design.
"""
