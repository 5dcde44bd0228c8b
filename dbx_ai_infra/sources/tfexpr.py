"""HCL's expression syntax, parsed as Terraform parses it: the parser of the expression strings python-hcl2 gives
(``"${var.m + 1}"``, ``"hi %{ if var.on }on%{ endif }"``, a heredoc), into a small tree (`parse`, `template`).

The grammar is HCL's native syntax specification (hashicorp/hcl, ``hclsyntax/spec.md``): literals, tuple and object
constructors, templates (``${...}`` interpolations, ``%{ if }`` / ``%{ for }`` directives and ``~`` strip markers,
``$${`` / ``%%{`` escapes, heredocs with ``<<-`` indentation), variables and traversals (``.attr``, ``[index]``,
the legacy ``.0``), splats (``[*]`` full, ``.*`` attribute-only), function calls (with a final ``...`` expansion),
``for`` expressions (list and object forms, ``if``, grouping ``...``), the conditional, and the operators with the
spec's precedence (highest first: ``* / %``, ``+ -``, ``> >= < <=``, ``== !=``, ``&&``, ``||``; the unary ``!`` and
``-`` above them all). The tree is evaluated by `dbx_ai_infra.sources.tfeval`.

A node is a tuple whose first item names it: ``("lit", value)``, ``("tmpl", parts)``, ``("var", name)``,
``("attr", node, name)``, ``("index", node, key)``, ``("splat", node, steps)``, ``("call", name, args, expand)``,
``("tuple", items)``, ``("object", pairs)``, ``("for", key_name, value_name, collection, key, value, group, cond)``
(``key`` is None for the list form), ``("cond", c, a, b)``, ``("bin", op, a, b)``, ``("unary", op, a)``. A
template's parts are strings and nodes, with ``("if", cond, then, else)`` and ``("each", key_name, value_name,
collection, body)`` for the directives.
"""

from __future__ import annotations

import re
from typing import Any

Node = tuple[Any, ...]


class ParseError(ValueError):
    """An expression this parser does not read (not HCL, or a form it does not know)."""


_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\n]+|\#[^\n]*|//[^\n]*|/\*.*?\*/)
  | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_-]*)
  | (?P<op>\.\.\.|==|!=|<=|>=|&&|\|\||=>|[-+*/%<>!?:=,.()\[\]{}])
""", re.X | re.S)
_PRECEDENCE = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5,
               "*": 6, "/": 6, "%": 6}
_HEREDOC = re.compile(r"<<(-?)([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\r?\n")


def _string_end(text: str, start: int) -> int:
    """The index after the closing quote of the quoted template that opens at ``text[start]``."""
    i = start + 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i + 1
        if c in "$%" and text.startswith("{", i + 1) and not (i > start + 1 and text[i - 1] == c):
            i = _brace_end(text, i + 1)
            continue
        i += 1
    raise ParseError("a string that is not closed")


def _brace_end(text: str, start: int) -> int:
    """The index after the brace that closes the one at ``text[start]`` (strings inside skipped)."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c == '"':
            i = _string_end(text, i)
            continue
        depth += (c == "{") - (c == "}")
        i += 1
        if depth == 0:
            return i
    raise ParseError("a brace that is not closed")


def _heredoc_end(text: str, start: int) -> tuple[int, str, bool]:
    """The end of the heredoc opening at ``text[start]`` (``<<EOT``), its template text, and whether it is a
    flush heredoc (``<<-``: the lines' common indentation is removed, after the strip markers, as hcl does)."""
    opening = _HEREDOC.match(text, start)
    if opening is None:
        raise ParseError("a heredoc without its marker line")
    strip, marker = opening.groups()
    # the marker closes on a line of its own; python-hcl2 writes what follows it (``EOT)``) on the same line
    closing = re.compile(rf"^[ \t]*{re.escape(marker)}(?![A-Za-z0-9_-])", re.M).search(text, opening.end())
    if closing is None:
        raise ParseError(f"a heredoc without its closing {marker}")
    return closing.end(), text[opening.end():closing.start()], bool(strip)


def _tokens(text: str) -> list[tuple[str, Any, int]]:
    """``(kind, text, position)`` tokens; a quoted template is one ``str`` token holding its parsed parts."""
    out: list[tuple[str, Any, int]] = []
    i = 0
    while i < len(text):
        if text[i] == '"':
            end = _string_end(text, i)
            out.append(("str", text[i + 1:end - 1], i))
            i = end
            continue
        if text.startswith("<<", i) and _HEREDOC.match(text, i):
            end, body, flush = _heredoc_end(text, i)
            out.append(("flush" if flush else "heredoc", body, i))
            i = end
            continue
        match = _TOKEN.match(text, i)
        if match is None:
            raise ParseError(f"unexpected {text[i]!r} at {i}")
        if match.lastgroup != "space":
            out.append((match.lastgroup or "", match.group(), i))
        i = match.end()
    out.append(("end", "", len(text)))
    return out


class _Parser:
    """A recursive-descent (precedence-climbing) parser over the tokens of one expression."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self, offset: int = 0) -> tuple[str, Any, int]:
        return self.tokens[min(self.at + offset, len(self.tokens) - 1)]

    def take(self) -> tuple[str, Any, int]:
        token = self.peek()
        self.at += 1
        return token

    def is_op(self, *ops: str) -> bool:
        kind, text, _ = self.peek()
        return kind == "op" and text in ops

    def expect(self, op: str) -> None:
        kind, text, position = self.take()
        if kind != "op" or text != op:
            raise ParseError(f"expected {op!r} at {position}, found {text!r}")

    def expression(self) -> Node:
        condition = self.binary(1)
        if not self.is_op("?"):
            return condition
        self.take()
        then = self.expression()
        self.expect(":")
        return ("cond", condition, then, self.expression())

    def binary(self, level: int) -> Node:
        left = self.unary()
        while True:
            kind, op, _ = self.peek()
            if kind != "op" or _PRECEDENCE.get(op, 0) < level:
                return left
            self.take()
            left = ("bin", op, left, self.binary(_PRECEDENCE[op] + 1))

    def unary(self) -> Node:
        if self.is_op("!", "-"):
            op = self.take()[1]
            operand = self.unary()
            if op == "-" and operand[0] == "lit" and isinstance(operand[1], (int, float)):
                return ("lit", -operand[1])
            return ("unary", op, operand)
        return self.postfix(self.primary())

    def postfix(self, node: Node) -> Node:
        while True:
            if self.is_op(".") and self.peek(1)[0] in ("ident", "number"):
                self.take()
                kind, name, _ = self.take()
                node = ("index", node, ("lit", int(name))) if kind == "number" else ("attr", node, name)
            elif self.is_op(".") and self.peek(1)[1] == "*":
                self.take(), self.take()
                node = ("splat", node, self.splat_steps(full=False))
            elif self.is_op("[") and self.peek(1)[1] == "*" and self.peek(2)[1] == "]":
                self.take(), self.take(), self.take()
                node = ("splat", node, self.splat_steps(full=True))
            elif self.is_op("["):
                self.take()
                key = self.expression()
                self.expect("]")
                node = ("index", node, key)
            else:
                return node

    def splat_steps(self, full: bool) -> list[Node]:
        """The traversal a splat applies to each element: ``.attr`` steps, and ``[index]`` ones for ``[*]``."""
        steps: list[Node] = []
        while True:
            if self.is_op(".") and self.peek(1)[0] == "ident":
                self.take()
                steps.append(("attr", None, self.take()[1]))
            elif full and self.is_op("[") and self.peek(1)[1] != "*":
                self.take()
                key = self.expression()
                self.expect("]")
                steps.append(("index", None, key))
            else:
                return steps

    def primary(self) -> Node:
        kind, text, position = self.take()
        if kind == "number":
            return ("lit", _number(text))
        if kind in ("str", "heredoc", "flush"):
            return ("tmpl", template(text, heredoc=kind != "str", flush=kind == "flush"))
        if kind == "ident":
            if text in ("true", "false"):
                return ("lit", text == "true")
            if text == "null":
                return ("lit", None)
            if self.is_op("("):
                return self.call(text)
            return ("var", text)
        if kind == "op" and text == "(":
            inner = self.expression()
            self.expect(")")
            return inner
        if kind == "op" and text == "[":
            return self.tuple_or_for()
        if kind == "op" and text == "{":
            return self.object_or_for()
        raise ParseError(f"unexpected {text or 'end'!r} at {position}")

    def call(self, name: str) -> Node:
        self.expect("(")
        args: list[Node] = []
        expand = False
        while not self.is_op(")"):
            args.append(self.expression())
            if self.is_op("..."):
                self.take()
                expand = True
            if not self.is_op(")"):
                self.expect(",")
        self.take()
        return ("call", name, args, expand)

    def tuple_or_for(self) -> Node:
        if self.peek()[:2] == ("ident", "for"):
            return self.for_expression("]")
        items: list[Node] = []
        while not self.is_op("]"):
            items.append(self.expression())
            if not self.is_op("]"):
                self.expect(",")
        self.take()
        return ("tuple", items)

    def object_or_for(self) -> Node:
        if self.peek()[:2] == ("ident", "for"):
            return self.for_expression("}")
        pairs: list[tuple[Node, Node]] = []
        while not self.is_op("}"):
            if self.peek()[0] == "ident" and self.peek(1)[1] in ("=", ":"):
                key: Node = ("lit", self.take()[1])
            else:
                key = self.expression()
            if not self.is_op("=", ":"):
                raise ParseError(f"expected '=' in an object at {self.peek()[2]}")
            self.take()
            pairs.append((key, self.expression()))
            if self.is_op(","):
                self.take()
        self.take()
        return ("object", pairs)

    def for_expression(self, closing: str) -> Node:
        self.take()  # for
        names = [self.name()]
        if self.is_op(","):
            self.take()
            names.append(self.name())
        if self.take()[1] != "in":
            raise ParseError("expected 'in' in a for expression")
        collection = self.expression()
        self.expect(":")
        key = None
        value = self.expression()
        if closing == "}":
            self.expect("=>")
            key, value = value, self.expression()
        group = closing == "}" and self.is_op("...")
        if group:
            self.take()
        condition = None
        if self.peek()[:2] == ("ident", "if"):
            self.take()
            condition = self.expression()
        self.expect(closing)
        key_name, value_name = (names[0], names[1]) if len(names) == 2 else (None, names[0])
        return ("for", key_name, value_name, collection, key, value, group, condition)

    def name(self) -> str:
        kind, text, position = self.take()
        if kind != "ident":
            raise ParseError(f"expected a name at {position}")
        return text


def _number(text: str) -> int | float:
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2 ** 63 else value


def parse(text: str) -> Node:
    """One expression; `ParseError` for text that is not one."""
    parser = _Parser(text)
    node = parser.expression()
    if parser.peek()[0] != "end":
        raise ParseError(f"unexpected {parser.peek()[1]!r} at {parser.peek()[2]}")
    return node


# --------------------------------------------------------------------------------------------------------------------
# Templates
# --------------------------------------------------------------------------------------------------------------------

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}
_DIRECTIVE = re.compile(r"^\s*(if|else|endif|for|endfor)\b(.*)$", re.S)


def _pieces(text: str, heredoc: bool, escapes: bool) -> list[Any]:
    """A template's flat pieces: literal strings, ``("${", node, strip_left, strip_right)`` and ``("%{", word, rest,
    strip_left, strip_right)``."""
    pieces: list[Any] = []
    literal: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and escapes and i + 1 < len(text):
            i = _escape(text, i, literal)
            continue
        if c in "$%" and text.startswith(c + c + "{", i):
            literal.append(c + "{")
            i += 3
            continue
        if c in "$%" and text.startswith("{", i + 1):
            end = _brace_end(text, i + 1)
            inner = text[i + 2:end - 1]
            left, right = inner.startswith("~"), inner.endswith("~")
            inner = inner[1 if left else 0:len(inner) - 1 if right else len(inner)]
            pieces.append("".join(literal))
            literal = []
            pieces.append(("${", parse(inner), left, right) if c == "$" else _directive(inner, left, right))
            i = end
            continue
        literal.append(c)
        i += 1
        if c == "\n" and heredoc:  # hcl reads a heredoc's literal text line by line
            pieces.append("".join(literal))
            literal = []
    pieces.append("".join(literal))
    return pieces


def _escape(text: str, i: int, literal: list[str]) -> int:
    nxt = text[i + 1]
    if nxt in _ESCAPES:
        literal.append(_ESCAPES[nxt])
        return i + 2
    width = {"u": 4, "U": 8}.get(nxt)
    if width and re.fullmatch(r"[0-9A-Fa-f]+", text[i + 2:i + 2 + width] or "-"):
        literal.append(chr(int(text[i + 2:i + 2 + width], 16)))
        return i + 2 + width
    raise ParseError(f"the escape \\{nxt} is not one HCL knows")


def _directive(inner: str, left: bool, right: bool) -> tuple[Any, ...]:
    found = _DIRECTIVE.match(inner)
    if found is None:
        raise ParseError(f"%{{{inner}}} is no template directive")
    return ("%{", found.group(1), found.group(2).strip(), left, right)


def _stripped(pieces: list[Any]) -> list[Any]:
    """The strip markers applied: ``~`` takes the whitespace (newlines included) on its side of the literal next
    to it."""
    out = list(pieces)
    for at, piece in enumerate(out):
        if isinstance(piece, tuple):
            if piece[-2] and at > 0 and isinstance(out[at - 1], str):
                out[at - 1] = out[at - 1].rstrip()
            if piece[-1] and at + 1 < len(out) and isinstance(out[at + 1], str):
                out[at + 1] = out[at + 1].lstrip()
    return [p for p in out if p != ""]


def template(text: str, heredoc: bool = False, flush: bool = False, escapes: bool | None = None) -> list[Any]:
    """A template's parts (the content of a quoted string, or of a heredoc), directives nested; a quoted string's
    escapes (``\\n``, ``\\"``...) are read unless ``escapes`` is False (python-hcl2 has read them already)."""
    pieces = _stripped(_pieces(text, heredoc, not heredoc if escapes is None else escapes))
    if flush:
        pieces = _flushed(pieces)
    parts, rest = _nest(pieces, 0, ())
    if rest != len(pieces):
        raise ParseError("a template directive that no %{ if } or %{ for } opens")
    return parts


def _flushed(pieces: list[Any]) -> list[Any]:
    """A ``<<-`` heredoc's pieces with the lines' common indentation removed, as hcl's
    ``flushHeredocTemplateParts`` does: a line starts after a literal that ends in a newline; a line that is only
    spaces does not count; a line that starts with an interpolation or directive has no indentation."""
    fewest, newline, starts = None, True, []
    for at, piece in enumerate(pieces):
        if newline:
            newline = False
            if isinstance(piece, str):
                trimmed = piece.lstrip()
                if not (trimmed == "" and piece.endswith("\n")):
                    spaces = len(piece) - len(trimmed)
                    starts.append(at)
                    fewest = spaces if fewest is None else min(fewest, spaces)
            else:
                fewest = 0
        if isinstance(piece, str) and piece.endswith("\n"):
            newline = True
    out = list(pieces)
    for at in starts:
        out[at] = out[at][fewest or 0:]
    return [p for p in out if p != ""]


def _nest(pieces: list[Any], at: int, closers: tuple[str, ...]) -> tuple[list[Any], int]:
    """The parts from ``pieces[at]`` up to a directive in ``closers`` (its index returned)."""
    parts: list[Any] = []
    while at < len(pieces):
        piece = pieces[at]
        if isinstance(piece, str):
            parts.append(piece)
        elif piece[0] == "${":
            parts.append(piece[1])
        elif piece[1] in closers:
            return parts, at
        elif piece[1] == "if":
            parts.append(("if", parse(piece[2]), *_if_branches(pieces, at)))
            at = _closing(pieces, at + 1, "endif")
        elif piece[1] == "for":
            key, value, collection = _for_header(piece[2])
            body, end = _nest(pieces, at + 1, ("endfor",))
            parts.append(("each", key, value, collection, body))
            at = end
        else:
            raise ParseError(f"%{{ {piece[1]} }} with no directive to close")
        at += 1
    if closers:
        raise ParseError(f"a template directive without its %{{ {closers[-1]} }}")
    return parts, at


def _if_branches(pieces: list[Any], at: int) -> tuple[list[Any], list[Any]]:
    then, end = _nest(pieces, at + 1, ("else", "endif"))
    if pieces[end][1] == "else":
        otherwise, _ = _nest(pieces, end + 1, ("endif",))
        return then, otherwise
    return then, []


def _closing(pieces: list[Any], at: int, word: str) -> int:
    """The index of the ``endif`` closing the directive whose body starts at ``at``."""
    depth = 0
    for index in range(at, len(pieces)):
        piece = pieces[index]
        if isinstance(piece, tuple) and piece[0] == "%{":
            depth += piece[1] in ("if", "for")
            if piece[1] in ("endif", "endfor"):
                if depth == 0 and piece[1] == word:
                    return index
                depth -= 1
    raise ParseError(f"a template directive without its %{{ {word} }}")


def _for_header(text: str) -> tuple[str | None, str, Node]:
    found = re.match(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*(?:,\s*([A-Za-z_][A-Za-z0-9_-]*)\s*)?in\b(.*)$", text, re.S)
    if found is None:
        raise ParseError(f"%{{ for {text} }} is no for directive")
    first, second, collection = found.groups()
    return (first, second, parse(collection)) if second else (None, first, parse(collection))


def source(text: str) -> Node:
    """A value as python-hcl2 gives it, a string: a heredoc (``<<EOT...``) or the content of a quoted template
    (an expression is ``${...}``), parsed. python-hcl2 has read the escapes of the string's literal text (not those
    of the strings inside its interpolations, which are as written)."""
    if text.startswith("<<") and _HEREDOC.match(text):
        _, body, flush = _heredoc_end(text, 0)
        return ("tmpl", template(body, heredoc=True, flush=flush))
    return ("tmpl", template(text, escapes=False))
