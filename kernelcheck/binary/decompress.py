"""Decompressors for compressed fatbin entries.

What nvcc 13.0's ``fatbinary`` writes (checked by compressing the test kernels with every
``--compress-mode`` and comparing the result with the uncompressed cubin):

* ``--compress-mode=speed``: entry flag ``0x2000``; the payload is one LZ4 *block* (no frame
  header, no checksum), the scheme that Cricket's fatbin reader documents and that older
  toolkits used for every compressed entry. :func:`lz4_block_decompress` decodes it in pure
  Python.
* ``--compress-mode=default``, ``size`` and ``balance``: entry flag ``0x8000``; the payload
  is a complete Zstandard frame (magic ``28 b5 2f fd``). It is decoded with the
  ``zstandard`` package: a pure-Python Zstandard decoder (FSE and Huffman tables, sequence
  execution) would be several hundred lines and slow on the multi-megabyte entries of real
  libraries, and CUDA 13 compresses with zstd by default, so the dependency is needed.

Both functions raise :class:`ValueError` with a message; the fatbin reader turns it into a
:class:`~kernelcheck.errors.BinaryFormatError` naming the entry.
"""

from __future__ import annotations

__all__ = ["lz4_block_decompress", "zstd_decompress", "ZSTD_MAGIC"]

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def lz4_block_decompress(source: bytes, expected_size: int) -> bytes:
    """Decode one LZ4 block into exactly `expected_size` bytes.

    Parameters
    ----------
    source : bytes
        The compressed block.
    expected_size : int
        The decompressed size recorded in the fatbin entry header.

    Returns
    -------
    bytes
        The decompressed data.

    Raises
    ------
    ValueError
        On a truncated block, a match offset reaching before the start of the output, or an
        output size other than `expected_size`.

    Notes
    -----
    Each sequence is a token (high nibble: literal count, low nibble: match length - 4, a
    nibble of 15 continuing in following bytes of 255...), the literals, then a 16-bit
    little-endian match offset; the last sequence has literals only
    (https://github.com/lz4/lz4/blob/dev/doc/lz4_Block_format.md).

    Examples
    --------
    >>> lz4_block_decompress(bytes([0x1F, ord("a"), 1, 0, 1, 0x10, ord("b")]), 22)
    b'aaaaaaaaaaaaaaaaaaaaab'
    """
    out = bytearray()
    position = 0
    end = len(source)
    while position < end:
        token = source[position]
        position += 1
        literals = token >> 4
        if literals == 15:
            while True:
                if position >= end:
                    raise ValueError("LZ4 block truncated in a literal length")
                extra = source[position]
                position += 1
                literals += extra
                if extra != 255:
                    break
        if position + literals > end:
            raise ValueError(f"LZ4 block truncated: {literals} literals at input offset {position}")
        out += source[position : position + literals]
        position += literals
        if position >= end:
            break
        if position + 2 > end:
            raise ValueError("LZ4 block truncated in a match offset")
        offset = source[position] | (source[position + 1] << 8)
        position += 2
        length = (token & 0x0F) + 4
        if length == 19:
            while True:
                if position >= end:
                    raise ValueError("LZ4 block truncated in a match length")
                extra = source[position]
                position += 1
                length += extra
                if extra != 255:
                    break
        if offset == 0 or offset > len(out):
            raise ValueError(
                f"LZ4 match offset {offset} reaches before the output start ({len(out)} bytes)"
            )
        if len(out) + length > expected_size:
            raise ValueError(f"LZ4 block decodes past the expected size of {expected_size} bytes")
        start = len(out) - offset
        if offset >= length:
            out += out[start : start + length]
        else:
            # An overlapping match repeats the last `offset` bytes.
            pattern = bytes(out[start:])
            repeats, rest = divmod(length, offset)
            out += pattern * repeats + pattern[:rest]
    if len(out) != expected_size:
        raise ValueError(f"LZ4 block decoded to {len(out)} bytes, the header says {expected_size}")
    return bytes(out)


def zstd_decompress(source: bytes, expected_size: int) -> bytes:
    """Decode one Zstandard frame into exactly `expected_size` bytes.

    Raises
    ------
    ValueError
        When the frame is corrupt, the ``zstandard`` package is missing, or the size differs.
    """
    if not source.startswith(ZSTD_MAGIC):
        raise ValueError(f"no Zstandard frame magic (found {source[:4].hex() or 'nothing'})")
    try:
        import zstandard
    except ImportError as error:  # pragma: no cover - a declared dependency
        raise ValueError("the zstandard package is needed for zstd-compressed entries") from error
    try:
        data = zstandard.ZstdDecompressor().decompress(source, max_output_size=expected_size)
    except zstandard.ZstdError as error:
        raise ValueError(f"corrupt Zstandard frame: {error}") from error
    if len(data) != expected_size:
        raise ValueError(
            f"Zstandard frame decoded to {len(data)} bytes, the header says {expected_size}"
        )
    return data
