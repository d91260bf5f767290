"""Bytes to text the way Python does it (PEP 263 coding cookie, BOM), with a readable error."""
from __future__ import annotations

import io
import tokenize


class DecodeProblem(Exception):
    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


def decode(data: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # unknown or malformed coding cookie
        raise DecodeProblem(f"cannot decode file: {exc}") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DecodeProblem(f"cannot decode file as {encoding}: {exc.reason} "
                            f"(byte 0x{data[exc.start]:02x} at offset {exc.start})", line) from None
    except LookupError as exc:
        raise DecodeProblem(f"cannot decode file: {exc}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return text
