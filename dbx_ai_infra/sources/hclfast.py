"""A fast reader of the plain part of HCL that gives python-hcl2's own tree, or declines (issue 51, item 8).

python-hcl2 (lark's LALR parser, then its rule tree, then its serializer) takes about 4 ms a file, which made a cold
``check --terraform`` of 5,000 files 8x the floor. Most Terraform is plain: blocks, attributes, strings with
``${...}``, numbers, references, function calls, objects, tuples, binary operators and conditionals. This reader
parses exactly that subset of python-hcl2's grammar (``hcl2/hcl2.lark`` of python-hcl2 8.1.4) and serializes it as
python-hcl2 8.1.4 does with ``with_comments=False, strip_string_quotes=True`` (``hcl2/rules/*.py``: the same
``${...}`` wrapping, the same escape processing, the same number conversion, operators joined by one space,
``__is_block__`` on every block), about twenty times faster.

Anything outside the subset makes it decline (`loads` returns None) and python-hcl2 reads the whole file: unary
operators, parentheses, ``for`` expressions, splats, heredocs, template directives, escaped ``$${``, numbers with an
exponent, provider functions, ``...`` arguments, computed object keys, a name that is both an attribute and a block
type in one body, and any text it does not expect (so every invalid file is refused by python-hcl2, with
python-hcl2's message). It never accepts text python-hcl2 would refuse: each place it reads a newline or a comment
is one where the grammar allows ``new_line_or_comment``. `tests/test_hclfast.py` compares the two readers on every
construct and on randomly damaged text.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from hcl2.utils import process_escape_sequences, to_dollar_string

from dbx_ai_infra import installed_version

#: The grammar's terminals (``hcl2.lark``), with its ignored whitespace ``[ \t\r]+`` before each.
_WS = re.compile(r"[ \t\r]*")
_NL = re.compile(r"(?:[ \t\r]*(?:\n[ \t]*|#.*\n|//.*\n|/\*(?:.|\n)*?\*/))+")
_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_-]*")
_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_EQ = re.compile(r"[ \t]*=(?!=|>)")
_COLON = re.compile(r"[ \t]*:(?!:)")
_OPERATOR = re.compile(r"==|!=|<=|>=|&&|\|\||[<>+\-*/%]")
_STRING_CHARS = re.compile(r"(?:(?!\$\$\{)(?!\$\{)(?!%%\{)(?!%\{)[^\"\\]|\\.|(?:\$(?!\$?\{))|(?:%(?!%?\{)))+")
#: Words the grammar lexes as their own terminals (``keyword``, ``literal_value``).
_KEYWORDS = frozenset({"if", "in", "for", "for_each", "else", "endif", "endfor"})
_LITERALS = {"true": True, "false": False, "null": None}
#: What may follow a whole expression in this subset (anything else, an operator included, declines).
_AFTER = frozenset("\n#/,)]}:=")


#: The python-hcl2 release whose grammar and serializer this reader follows; with any other installed, it declines
#: every file (python-hcl2 reads them all) until `tests/test_hclfast.py` passes against the new one.
SERIALIZES_AS = "8.1.4"
#: This reader's revision, part of the parse cache's key (`dbx_ai_infra.sources.tfcache.parser_version`).
REVISION = 1


@cache
def serializes_as_installed() -> bool:
    """Whether the installed python-hcl2 is the release this reader gives the same trees as."""
    return installed_version("python-hcl2") == SERIALIZES_AS


class Decline(Exception):
    """The text is outside the subset: python-hcl2 reads it."""


def loads(text: str) -> dict[str, Any] | None:
    """``text`` as python-hcl2 8.1.4 serializes it (``with_comments=False, strip_string_quotes=True``), or None when
    it is outside the subset this reader knows exactly."""
    reader = _Reader(text + "\n")  # python-hcl2 appends a newline too (lark has no end-of-file terminal)
    try:
        body = reader.body(top=True)
    except Decline:
        return None
    except Exception:  # noqa: BLE001 - a case this reader did not foresee: python-hcl2 reads the file, as always
        return None
    return body


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    # -- tokens -------------------------------------------------------------------------------------------------

    def ws(self) -> None:
        self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def newlines(self) -> bool:
        """Skip whitespace, newlines and comments (``new_line_or_comment``); whether there were any."""
        found = _NL.match(self.text, self.pos)
        if found:
            self.pos = found.end()
        self.ws()
        return found is not None

    def peek(self) -> str:
        self.ws()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise Decline
        self.pos += 1

    def name(self) -> str:
        self.ws()
        found = _NAME.match(self.text, self.pos)
        if not found:
            raise Decline
        self.pos = found.end()
        return found.group()

    # -- structure ----------------------------------------------------------------------------------------------

    def body(self, top: bool = False) -> dict[str, Any]:
        """``body``: attributes and blocks, separated by optional newlines and comments, to ``}`` (or the end)."""
        result: dict[str, Any] = {}
        attributes: set[str] = set()
        blocks: set[str] = set()
        while True:
            self.newlines()
            char = self.peek()
            if char == "" and top:
                break
            if char == "}" and not top:
                break
            name = self.name()
            equals = _EQ.match(self.text, self.pos)
            if name in (blocks if equals else attributes):  # python-hcl2 raises or overwrites: let it decide
                raise Decline
            if equals:
                self.pos = equals.end()
                result[name] = _top(self.expression())
                attributes.add(name)
                self.end_of_expression()
            else:
                result.setdefault(name, []).append(self.block())
                blocks.add(name)
        return result

    def block(self) -> dict[str, Any]:
        """A block after its type: labels (names or plain strings), ``{``, its body, ``}``."""
        labels: list[str] = []
        while self.peek() != "{":
            if self.peek() == '"':
                parts = self.string_parts()
                if any(kind != "chars" for kind, _ in parts):
                    raise Decline
                labels.append(process_escape_sequences("".join(raw for _, raw in parts)))
            else:
                label = self.name()
                if label in _KEYWORDS or label in _LITERALS:
                    raise Decline
                labels.append(label)
        self.pos += 1
        result: dict[str, Any] = self.body()
        self.expect("}")
        result["__is_block__"] = True
        for label in reversed(labels):
            result = {label: result}
        return result

    def end_of_expression(self) -> None:
        if self.peek() not in _AFTER or self.text.startswith("/", self.pos) and not \
                self.text.startswith(("//", "/*"), self.pos):
            raise Decline

    # -- expressions: a small tree, serialized as python-hcl2 serializes its rules -------------------------------

    def expression(self) -> tuple[Any, ...]:
        """An expression: terms joined by binary operators, or a conditional (``c ? a : b``), with newlines where
        ``conditional`` and the binary rules allow them (after an operator, around ``?`` and ``:``). A newline
        *before* an operator (python-hcl2's post-lexer joins the lines) leaves the operator where no item of the
        subset may start, so the file is declined."""
        terms: list[Any] = [self.term()]
        while (operator := self.operator()) is not None:
            self.newlines()
            terms += [operator, self.term()]
        node = terms[0] if len(terms) == 1 else ("ops", terms)
        if self.peek() != "?":
            return node
        self.pos += 1
        self.newlines()
        yes = self.expression()
        self.newlines()
        colon = _COLON.match(self.text, self.pos)
        if not colon:
            raise Decline
        self.pos = colon.end()
        self.newlines()
        return ("cond", node, yes, self.expression())

    def operator(self) -> str | None:
        """A binary operator after a term (on its line), or None; ``//`` and ``/*`` begin comments."""
        self.ws()
        found = _OPERATOR.match(self.text, self.pos)
        if not found or self.text.startswith(("//", "/*"), self.pos):
            return None
        if self.text.startswith(("<<", "%{"), self.pos):
            raise Decline  # a heredoc or a directive where an operator could be
        self.pos = found.end()
        return found.group()

    def term(self) -> tuple[Any, ...]:
        """An expression term of the subset: a literal, a string, a reference, a call, an object or a tuple."""
        char = self.peek()
        if char == '"':
            return ("str", self.string_parts())
        if char == "{":
            return self.object()
        if char == "[":
            return self.tuple()
        if char.isdigit():
            return self.number()
        word = self.name()
        if word in _LITERALS:
            if self.peek() in (".", "["):
                raise Decline
            return ("lit", word)
        if word in _KEYWORDS:
            raise Decline
        if self.peek() == "(":
            return self.call(word)
        return self.traversal(word)

    def number(self) -> tuple[Any, ...]:
        found = _NUMBER.match(self.text, self.pos)
        if not found or found.group(2) or _NAME.match(self.text, found.end()):
            raise Decline
        self.pos = found.end()
        return ("float" if found.group(1) else "int", found.group())

    def string_parts(self) -> list[tuple[str, Any]]:
        """A quoted template's parts: ``("chars", raw text)`` and ``("interp", expression)``."""
        self.expect('"')
        parts: list[tuple[str, Any]] = []
        text = self.text
        while True:
            found = _STRING_CHARS.match(text, self.pos)
            if found:
                parts.append(("chars", found.group()))
                self.pos = found.end()
            if text.startswith('"', self.pos):
                self.pos += 1
                return parts
            if not text.startswith("${", self.pos) or text.startswith("$${", self.pos):
                raise Decline  # a directive, an escaped marker, a line break after a backslash, the end
            self.pos += 2
            parts.append(("interp", self.expression()))
            self.expect("}")

    def traversal(self, root: str) -> tuple[Any, ...]:
        steps: list[tuple[str, Any]] = []
        text = self.text
        while True:
            self.ws()
            if text.startswith(".", self.pos):
                self.pos += 1
                if text[self.pos:self.pos + 1].isdigit():
                    found = re.compile(r"[0-9]+").match(text, self.pos)
                    assert found is not None
                    if text.startswith(".", found.end()) or found.group() != str(int(found.group())):
                        raise Decline  # ``a.0.1`` may lex as a float; ``a.01`` loses its zero
                    steps.append(("short", found.group()))
                    self.pos = found.end()
                    continue
                attr = self.name() if text[self.pos:self.pos + 1] not in (" ", "\t", "*") else ""
                if not attr or attr in _KEYWORDS:
                    raise Decline  # a splat, a keyword, ``a. b``
                steps.append(("attr", attr))
            elif text.startswith("[", self.pos):
                self.pos += 1
                if self.peek() == "*":
                    raise Decline
                steps.append(("index", self.expression()))
                self.expect("]")
            else:
                return ("ref", root, steps) if steps else ("ident", root)

    def call(self, function: str) -> tuple[Any, ...]:
        """``name(args)``: newlines allowed where ``function_call`` and ``arguments`` allow them."""
        self.expect("(")
        args: list[tuple[Any, ...]] = []
        self.newlines()
        while self.peek() != ")":
            if args:
                self.newlines()
                self.expect(",")
                self.newlines()
                if self.peek() == ")":
                    break
            args.append(self.expression())
            self.end_of_expression()
            if self.text.startswith("...", self.pos):
                raise Decline
            self.newlines()
        self.pos += 1
        return self.after_term(("call", function, args))

    def after_term(self, node: tuple[Any, ...]) -> tuple[Any, ...]:
        """A call, object or tuple followed by ``.x`` or ``[i]`` is a traversal of it: outside the subset."""
        if self.peek() in (".", "["):
            raise Decline
        return node

    def object(self) -> tuple[Any, ...]:
        """``{ key = value, ... }``: separators and newlines as ``object`` allows them."""
        self.expect("{")
        elements: list[tuple[tuple[Any, ...], tuple[Any, ...]]] = []
        while True:
            self.newlines()
            if self.peek() == "}":
                self.pos += 1
                return self.after_term(("object", elements))
            key = self.object_key()
            found = _EQ.match(self.text, self.pos) or _COLON.match(self.text, self.pos)
            if not found:
                raise Decline
            self.pos = found.end()
            elements.append((key, self.expression()))
            self.end_of_expression()
            self.newlines()
            if self.peek() == ",":
                self.pos += 1

    def object_key(self) -> tuple[Any, ...]:
        if self.peek() == '"':
            parts = self.string_parts()
            if any(kind != "chars" for kind, _ in parts):
                raise Decline
            return ("str", parts)
        key = self.name()
        if key in _KEYWORDS or key in _LITERALS:
            raise Decline
        self.ws()
        return ("ident", key)

    def tuple(self) -> tuple[Any, ...]:
        """``[ a, b, ]``: newlines as ``tuple`` allows them."""
        self.expect("[")
        elements: list[tuple[Any, ...]] = []
        while True:
            self.newlines()
            if self.peek() == "]":
                self.pos += 1
                return self.after_term(("tuple", elements))
            if elements:
                self.expect(",")
                self.newlines()
                if self.peek() == "]":
                    continue
            if self.peek() == "f" and _NAME.match(self.text, self.pos).group() == "for":  # type: ignore[union-attr]
                raise Decline
            elements.append(self.expression())
            self.end_of_expression()


def _top(node: tuple[Any, ...]) -> Any:
    """A value outside ``${...}``: python-hcl2's values (numbers, booleans, null, unquoted strings, dicts, lists)."""
    kind = node[0]
    if kind == "str":
        return "".join(process_escape_sequences(raw) if part == "chars" else to_dollar_string(_inner(raw))
                       for part, raw in node[1])
    if kind == "int":
        return int(node[1])
    if kind == "float":
        return float(node[1])
    if kind == "lit":
        return _LITERALS[node[1]]
    if kind == "ident":
        return node[1]
    if kind == "object":
        return {_key(key, top=True): _top(value) for key, value in node[1]}
    if kind == "tuple":
        return [_top(element) for element in node[1]]
    return to_dollar_string(_inner(node))


def _key(node: tuple[Any, ...], top: bool) -> str:
    if node[0] == "ident":
        return str(node[1])
    raw = "".join(raw for _, raw in node[1])
    return process_escape_sequences(raw) if top else f'"{raw}"'


def _inner(node: tuple[Any, ...]) -> str:
    """An expression inside ``${...}``, written as python-hcl2 writes it back."""
    kind = node[0]
    if kind == "str":
        return '"' + "".join(raw if part == "chars" else to_dollar_string(_inner(raw)) for part, raw in node[1]) + '"'
    if kind == "int":
        return str(int(node[1]))
    if kind == "float":
        return str(float(node[1]))
    if kind in ("lit", "ident"):
        return str(node[1])
    if kind == "ref":
        return node[1] + "".join(f".{step}" if how == "attr" else f".{int(step)}" if how == "short" else
                                 f"[{_inner(step)}]" for how, step in node[2])
    if kind == "call":
        return f"{node[1]}({', '.join(_inner(arg) for arg in node[2])})"
    if kind == "object":
        return "{" + ", ".join(f"{_key(key, top=False)} = {_inner(value)}" for key, value in node[1]) + "}"
    if kind == "ops":  # BinaryOpRule: "lhs op rhs", operators stripped, no parentheses added
        return " ".join(term if isinstance(term, str) else _inner(term) for term in node[1])
    if kind == "cond":  # ConditionalRule
        return f"{_inner(node[1])} ? {_inner(node[2])} : {_inner(node[3])}"
    return "[" + ", ".join(_inner(element) for element in node[1]) + "]"
