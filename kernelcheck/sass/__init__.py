"""The SASS front end: nvdisasm's text of a cubin into the Kernel IR.

:mod:`~kernelcheck.sass.grammar` parses one instruction (``grammars/sass.lark``),
:mod:`~kernelcheck.sass.function` builds a function with labels at branch targets,
:mod:`~kernelcheck.sass.params` maps constant-bank reads to kernel parameters,
:mod:`~kernelcheck.sass.listing` reads nvdisasm's plain listing text, and
:mod:`~kernelcheck.sass.loader` turns a cubin image into a module.
"""
