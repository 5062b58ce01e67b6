"""What kernelcheck writes for people and machines: files written whole or not at all,
records of findings, SARIF, short kernel names and progress bars."""
