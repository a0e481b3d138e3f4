"""Go's encoding/json verdict on a document, worded as Go words it.

kube checks `.dockercfg` and `.dockerconfigjson` Secrets with `json.Unmarshal(data,
&map[string]interface{}{})` and reports `err.Error()`. `unmarshal_map_error` gives the same
text: the scanner's syntax errors (checked over the whole input first, as Go's checkValid
does), then the type error when the document is not an object (or null).
Invariant: pure; never raises; None means Go would accept the document.
"""

from __future__ import annotations

from asyncop.apiserver.builtin.gofmt import go_quote

_WS = b" \t\n\r"
_EOF = "unexpected end of JSON input"


class _SyntaxError(Exception):
    pass


def _quote_char(byte: int) -> str:
    """encoding/json quoteChar."""
    if byte == ord("'"):
        return "'\\''"
    if byte == ord('"'):
        return "'\"'"
    return "'" + go_quote(chr(byte))[1:-1] + "'"


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def peek(self) -> int | None:
        return self.data[self.pos] if self.pos < len(self.data) else None

    def take(self) -> int:
        byte = self.peek()
        if byte is None:
            raise _SyntaxError(_EOF)
        self.pos += 1
        return byte

    def fail(self, byte: int, context: str) -> _SyntaxError:
        return _SyntaxError(f"invalid character {_quote_char(byte)} {context}")

    def skip_ws(self) -> None:
        while (byte := self.peek()) is not None and byte in _WS:
            self.pos += 1

    def value(self) -> str:
        self.skip_ws()
        byte = self.take()
        if byte == ord("{"):
            self.object()
            return "object"
        if byte == ord("["):
            self.array()
            return "array"
        if byte == ord('"'):
            self.string()
            return "string"
        if byte == ord("-") or ord("0") <= byte <= ord("9"):
            self.number(byte)
            return "number"
        for word, kind in ((b"true", "bool"), (b"false", "bool"), (b"null", "null")):
            if byte == word[0]:
                for expected in word[1:]:
                    got = self.take()
                    if got != expected:
                        raise self.fail(got, f"in literal {word.decode()} (expecting "
                                             f"{_quote_char(expected)})")
                return kind
        raise self.fail(byte, "looking for beginning of value")

    def object(self) -> None:
        self.skip_ws()
        if self.peek() == ord("}"):
            self.pos += 1
            return
        while True:
            byte = self.take()
            if byte != ord('"'):
                raise self.fail(byte, "looking for beginning of object key string")
            self.string()
            self.skip_ws()
            byte = self.take()
            if byte != ord(":"):
                raise self.fail(byte, "after object key")
            self.value()
            self.skip_ws()
            byte = self.take()
            if byte == ord("}"):
                return
            if byte != ord(","):
                raise self.fail(byte, "after object key:value pair")
            self.skip_ws()

    def array(self) -> None:
        self.skip_ws()
        if self.peek() == ord("]"):
            self.pos += 1
            return
        while True:
            self.value()
            self.skip_ws()
            byte = self.take()
            if byte == ord("]"):
                return
            if byte != ord(","):
                raise self.fail(byte, "after array element")

    def string(self) -> None:
        while True:
            byte = self.take()
            if byte == ord('"'):
                return
            if byte == ord("\\"):
                escape = self.take()
                if escape == ord("u"):
                    for _ in range(4):
                        digit = self.take()
                        if chr(digit) not in "0123456789abcdefABCDEF":
                            raise self.fail(digit, "in \\u hexadecimal character escape")
                elif chr(escape) not in '"\\/bfnrt':
                    raise self.fail(escape, "in string escape code")
            elif byte < 0x20:
                raise self.fail(byte, "in string literal")

    def digits(self) -> None:
        while (byte := self.peek()) is not None and ord("0") <= byte <= ord("9"):
            self.pos += 1

    def number(self, first: int) -> None:
        if first == ord("-"):
            first = self.take()
            if not ord("0") <= first <= ord("9"):
                raise self.fail(first, "in numeric literal")
        if first != ord("0"):
            self.digits()
        if self.peek() == ord("."):
            self.pos += 1
            byte = self.take()
            if not ord("0") <= byte <= ord("9"):
                raise self.fail(byte, "after decimal point in numeric literal")
            self.digits()
        if self.peek() in (ord("e"), ord("E")):
            self.pos += 1
            byte = self.take()
            if byte in (ord("+"), ord("-")):
                byte = self.take()
            if not ord("0") <= byte <= ord("9"):
                raise self.fail(byte, "in exponent of numeric literal")
            self.digits()


def unmarshal_map_error(data: bytes) -> str | None:
    """`json.Unmarshal(data, &map[string]interface{}{})`'s error text, or None."""
    scanner = _Scanner(data)
    try:
        kind = scanner.value()
        scanner.skip_ws()
        trailing = scanner.peek()
        if trailing is not None:
            raise scanner.fail(trailing, "after top-level value")
    except _SyntaxError as err:
        return str(err)
    if kind in ("object", "null"):
        return None
    return f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
