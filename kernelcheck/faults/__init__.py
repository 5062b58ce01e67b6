"""Fault models on the CPU emulator, fault-injection campaigns and the PTX fault rewriter."""
