"""Does a message string say anything? Its printf conversions removed, at least one letter
must remain (a word, not only `%d vs %d` or punctuation)."""
from __future__ import annotations

_CONVERSIONS = set("diouxXeEfFgGaAcspn")
_FLAGS = set("-+ #0'123456789.*hljztLqI")


def strip_conversions(message: str) -> str:
    """`message` without its printf conversions (`%d`, `%5.2f`, `%lld`, `%zu`, `%%`)."""
    out, i, n = [], 0, len(message)
    while i < n:
        ch = message[i]
        if ch != "%":
            out.append(ch)
            i += 1
            continue
        j = i + 1
        if j < n and message[j] == "%":
            i = j + 1
            continue
        while j < n and message[j] in _FLAGS:
            j += 1
        if j < n and message[j] in _CONVERSIONS:
            i = j + 1
        else:
            out.append(ch)  # a lone % is text
            i += 1
    return "".join(out)


def has_words(message: str) -> bool:
    plain = strip_conversions(message)
    # escapes such as \n or \t are not words
    plain = plain.replace("\\n", " ").replace("\\t", " ").replace("\\r", " ")
    return any(ch.isalpha() for ch in plain)
