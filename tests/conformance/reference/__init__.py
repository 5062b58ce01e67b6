"""References for the conformance cases, written from the PTX ISA's text and independent of
the emulator: each computes, from a case's inputs, the exact contents its output buffers
must hold. See tests/conformance/README.md for how cases, references and expectations meet."""
