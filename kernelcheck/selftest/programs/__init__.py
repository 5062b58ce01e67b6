"""Programs the self-test runs under ``kernelcheck run`` (each a script run by path)."""
