"""Static idempotency analysis of PTX kernels: symbolic addresses, access summaries, classes.

The entry points are :func:`kernelcheck.analysis.summary.analyze_kernel` and
:func:`kernelcheck.analysis.summary.analyze_module`.
"""
