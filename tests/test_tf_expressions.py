"""HCL expressions evaluated as Terraform evaluates them: operators and their precedence, conditionals, ``for``
expressions, splats, templates (directives, strip markers, escapes, heredocs), traversals, the built-in functions,
and unknown values carried as Terraform carries them.

Each expected value below is what ``terraform console -plan`` (Terraform v1.11.4, linux_amd64) printed for
``jsonencode(local.eN)`` over the same module, recorded on 2026-12-06; ``UNKNOWN`` is its ``(known after apply)``
(``local.unk`` is a ``terraform_data`` resource's output, unknown until apply, as a data source's attribute is
here). `test_the_table_is_what_terraform_console_prints` re-checks the table against the binary where it is on
PATH.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from dbx_ai_infra.sources.hcl import read_module
from dbx_ai_infra.sources.tfscope import Scope
from dbx_ai_infra.sources.tfvalues import wholly_known

UNKNOWN: Any = object()

# the module every case is a local of: ``local.unk`` (and the list and map made from it) unknown until apply
MODULE = """resource "terraform_data" "x" {
  input = "a"
}
locals {
  unk     = terraform_data.x.output
  unklist = terraform_data.x.output == "a" ? ["a"] : ["b", "c"]
  unkmap  = terraform_data.x.output == "a" ? { x = 1 } : { x = 2 }
  num     = 4
  flag    = true
  obj     = { a = "1", b = "" }
  nested  = { list = [{ name = "first" }, { name = "second" }] }
  heredoc = <<-EOT
    hello ${local.num}
    %{ for x in ["a", "b"] ~}
    - ${x}
    %{ endfor ~}
  EOT
"""

CASES: list[tuple[str, Any]] = [
    ('2 + 3 * 4 - -1', 15),
    ('(2 + 3) * 4', 20),
    ('10 / 4', 2.5),
    ('7 % 3', 1),
    ('-7 % 3', -1),
    ('"1" + 1', 2),
    ('1 < 2 && 2 <= 2 || false', True),
    ('!true || 1 > 2 && 3 >= 3', False),
    ('!(1 == 2) == true', True),
    ('-local.num * 2', -8),
    ('1.5e3', 1500),
    ('1 == 1.0', True),
    ('true == "true"', False),
    ('"1" == 1', False),
    ('[1, 2] == [1, 2]', True),
    ('{a = 1} != {a = 2}', True),
    ('null == null', True),
    ('5 > 3 ? "big" : "small"', 'big'),
    ('local.flag ? local.num : 0', 4),
    ('[for x in ["a", "b", "c"] : upper(x) if x != "b"]', ['A', 'C']),
    ('[for i, x in ["a", "b"] : "${i}:${x}"]', ['0:a', '1:b']),
    ('{for k, v in {b = 2, a = 1} : v => k}', {'1': 'a', '2': 'b'}),
    ('{for s in ["ab", "b", "ac"] : substr(s, 0, 1) => s...}', {'a': ['ab', 'ac'], 'b': ['b']}),
    ('{for k, v in local.obj : k => v if v != ""}', {'a': '1'}),
    ('[{a = 1}, {a = 2}][*].a', [1, 2]),
    ('[{a = 1}, {a = 2}].*.a', [1, 2]),
    ('{a = 1}[*].a', [1]),
    ('local.nested.list[1].name', 'second'),
    ('local.nested["list"][0]["name"]', 'first'),
    ('"x%{ if local.flag }yes%{ else }no%{ endif }y"', 'xyesy'),
    ('"%{ for i, x in ["a", "b"] ~} ${i}=${x} %{~ endfor }"', '0=a1=b'),
    ('"a\\tb\\\\c\\"d\\u00e9 $${lit} %%{lit}"', 'a\tb\\c"dé ${lit} %{lit}'),
    ('local.heredoc', 'hello 4\n    - a\n    - b\n'),
    ('merge({a = 1, b = 2}, {b = 3}, null)', {'a': 1, 'b': 3}),
    ('lookup({a = 1}, "b", "d")', 'd'),
    ('lookup({a = 1}, "a")', 1),
    ('try(local.obj.missing, "fallback")', 'fallback'),
    ('try(local.obj.a, "fallback")', '1'),
    ('can(local.obj.missing)', False),
    ('can(local.obj.a)', True),
    ('coalesce("", null, "x")', 'x'),
    ('concat([1], ["a"], [])', [1, 'a']),
    ('toset(["b", "a", "b"])', ['a', 'b']),
    ('tolist(toset(["b", "a"]))', ['a', 'b']),
    ('tomap({a = "1"})', {'a': '1'}),
    ('jsondecode("{\\"a\\": [1, 2.5, true, null]}")', {'a': [1, 2.5, True, None]}),
    ('jsonencode({b = 1.5, a = [true, null, "<x>"]})', '{"a":[true,null,"\\u003cx\\u003e"],"b":1.5}'),
    ('length("héllo")', 5),
    ('length({a = 1, b = 2})', 2),
    ('keys({b = 1, a = 2})', ['a', 'b']),
    ('values({b = 1, a = 2})', [2, 1]),
    ('contains(["a", "b"], "b")', True),
    ('format("%05.1f|%s|%d|%q|%v|%t", 3.14159, "x", 7, "q", 2.5, true)', '003.1|x|7|"q"|2.5|true'),
    ('format("%-5s|%5d|%x|%%", "ab", 42, 255)', 'ab   |   42|ff|%'),
    ('join("-", ["a", 1, true])', 'a-1-true'),
    ('split(",", "a,b,,c")', ['a', 'b', '', 'c']),
    ('replace("hello-world", "-", "_")', 'hello_world'),
    ('replace("hello-world", "/(\\\\w+)-(\\\\w+)/", "$2 $1")', 'world hello'),
    ('lower("AbC")', 'abc'),
    ('upper("aBc")', 'ABC'),
    ('min(3, 1, 2)', 1),
    ('max(1, "5", 3)', 5),
    ('max([4, 9]...)', 9),
    ('element(["a", "b"], 3)', 'b'),
    ('flatten([[1, [2]], [3], []])', [1, 2, 3]),
    ('distinct([1, 2, 1])', [1, 2]),
    ('range(5)', [0, 1, 2, 3, 4]),
    ('range(1, 10, 3)', [1, 4, 7]),
    ('range(3, 0)', [3, 2, 1]),
    ('zipmap(["a", "b"], [1, 2])', {'a': 1, 'b': 2}),
    ('tostring(1.50)', '1.5'),
    ('tonumber("1e3")', 1000),
    ('tobool("true")', True),
    ('abs(-3.5)', 3.5),
    ('ceil(1.2)', 2),
    ('floor(-1.2)', -2),
    ('trimspace("  x \\n")', 'x'),
    ('trimprefix("prefix-x", "prefix-")', 'x'),
    ('trimsuffix("x.tf", ".tf")', 'x'),
    ('startswith("databricks", "data")', True),
    ('endswith("databricks", "bricks")', True),
    ('substr("hello", -3, -1)', 'llo'),
    ('regex("(\\\\d+)-(\\\\w+)", "12-ab")', ['12', 'ab']),
    ('regex("^v(?P<major>\\\\d+)", "v15")', {'major': '15'}),
    ('one([])', None),
    ('one(["x"])', 'x'),
    ('sum([1, 2.5])', 3.5),
    ('setunion(["b"], ["a", "b"])', ['a', 'b']),
    ('compact(["a", "", null, "b"])', ['a', 'b']),
    ('coalescelist([], [1])', [1]),
    ('slice([1, 2, 3, 4], 1, 3)', [2, 3]),
    ('reverse([1, 2, 3])', [3, 2, 1]),
    ('sort(["b", "a", "10", "9"])', ['10', '9', 'a', 'b']),
    ('index(["a", "b"], "b")', 1),
    ('base64encode("hi")', 'aGk='),
    ('title("hello world")', 'Hello World'),
    ('local.unk', UNKNOWN),
    ('"pre-${local.unk}"', UNKNOWN),
    ('local.unk == "a"', UNKNOWN),
    ('local.unk == "a" ? 1 : 1', 1),
    ('local.unk == "a" ? 1 : 2', UNKNOWN),
    ('false && local.unk == "a"', UNKNOWN),
    ('try(local.unk, 3)', UNKNOWN),
    ('can(local.unk)', UNKNOWN),
    ('coalesce("a", local.unk)', 'a'),
    ('coalesce(local.unk, "a")', UNKNOWN),
    ('length([local.unk, 1])', 2),
    ('merge({a = local.unk}, {b = 1})', UNKNOWN),
    ('merge(local.obj, local.unkmap)', UNKNOWN),
    ('upper(local.unk)', UNKNOWN),
    ('contains(["a", local.unk], "a")', True),
    ('[for x in local.unklist : x]', UNKNOWN),
    ('length(local.unklist)', UNKNOWN),
    ('local.unkmap.x', UNKNOWN),
    ('[for k, v in toset(["b", "a"]) : k]', ['a', 'b']),
    ('[for k, v in ["b", "a"] : k]', [0, 1]),
    # issue 51: functions real modules call that were not evaluated before
    ('cidrhost("10.12.112.0/20", 16)', '10.12.112.16'),
    ('cidrhost("10.12.112.0/20", -2)', '10.12.127.254'),
    ('cidrhost("fd00:fd12:3456:7890:00a2::/72", 34)', 'fd00:fd12:3456:7890::22'),
    ('cidrsubnet("172.16.0.0/12", 4, 2)', '172.18.0.0/16'),
    ('cidrsubnet("10.1.2.3/24", 4, 15)', '10.1.2.240/28'),
    ('cidrsubnet("fd00:fd12:3456:7890::/56", 16, 162)', 'fd00:fd12:3456:7800:a200::/72'),
    ('[for i in range(3) : cidrsubnet("10.0.0.0/16", 8, i)]', ['10.0.0.0/24', '10.0.1.0/24', '10.0.2.0/24']),
    ('cidrnetmask("172.16.0.0/12")', '255.240.0.0'),
    ('formatlist("Hello, %s!", ["Valentina", "Ander"])', ['Hello, Valentina!', 'Hello, Ander!']),
    ('formatlist("%s, %s!", "Salutations", ["Valentina", "Ander"])', ['Salutations, Valentina!',
                                                                     'Salutations, Ander!']),
    ('formatlist("%s-%d", ["a", "b"], [1, 2])', ['a-1', 'b-2']),
    ('formatlist("%s", "a")', ['a']),
    ('format("%[2]s %[1]s", "a", "b")', 'b a'),
    ('format("%[2]s %s", "a", "b", "c")', 'b c'),
    ('format("%[1]s %[1]q", "a")', 'a "a"'),
    ('yamldecode("a: yes\\nb: 010\\nc: 1e3\\nd: \\"x\\"\\ne: [1, on, ~]\\nf: 0x1F\\ng: 1_000")',
     {"a": True, "b": 10, "c": 1000, "d": "x", "e": [1, True, None], "f": 31, "g": "1_000"}),
    ('yamldecode("- 2026-01-01\\n- !!str 5\\n- 1.5e+3")', ["2026-01-01T00:00:00Z", "5", 1500]),
    ('fileset(path.module, "*.tf")', ['main.tf']),
    ('fileset(path.module, "**/{main,x}.t?")', ['main.tf']),
    ('fileset(path.module, "nope/*")', []),

]


def _module(tmp_path: Path) -> Path:
    text = MODULE + "".join(f"  e{i} = {expression}\n" for i, (expression, _) in enumerate(CASES)) + "}\n"
    (tmp_path / "main.tf").write_text(text)
    return tmp_path


def _same(got: Any, expected: Any) -> bool:
    """Equal as Terraform's JSON shows them (``1`` is not ``true``, ``"1"`` is not ``1``)."""
    return json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    directory = _module(tmp_path_factory.mktemp("expressions"))
    module = read_module(directory)
    scope = Scope("", {}, module.locals, [], directory=directory, root=directory)
    return {expression: scope.local(f"e{i}") for i, (expression, _) in enumerate(CASES)}


@pytest.mark.parametrize(("expression", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_an_expression_has_the_value_terraform_gives_it(expression: str, expected: Any,
                                                        evaluated: dict[str, Any]) -> None:
    got = evaluated[expression]
    if expected is UNKNOWN:
        assert not wholly_known(got), f"{expression} is known after apply in Terraform, not {got!r}"
    else:
        assert wholly_known(got) and _same(got, expected), f"{expression}: {got!r}, Terraform: {expected!r}"


@pytest.mark.skipif(shutil.which("terraform") is None, reason="the terraform binary is not on PATH")
def test_the_table_is_what_terraform_console_prints(tmp_path: Path) -> None:
    directory = _module(tmp_path)
    query = "[" + ", ".join(f"jsonencode(local.e{i})" for i in range(len(CASES))) + "]\n"
    config = tmp_path / "terraformrc"
    config.write_text("")
    environment = {**os.environ, "TF_CLI_CONFIG_FILE": str(config), "NO_COLOR": "1", "TF_IN_AUTOMATION": "1"}
    run = subprocess.run(["terraform", "console", "-plan"], input=query, cwd=directory, env=environment,
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    printed = [line.strip().rstrip(",") for line in run.stdout.splitlines()[1:-1]]
    assert len(printed) == len(CASES)
    for (expression, expected), shown in zip(CASES, printed, strict=True):
        if expected is UNKNOWN:
            assert shown == "(known after apply)", expression
        else:
            assert re.fullmatch(r'".*"', shown), (expression, shown)
            assert _same(json.loads(json.loads(shown)), expected), (expression, shown)


#: Operands Terraform refuses (a null, or a value of a type that does not convert, where an operator, a template or a
#: function takes none): an error of `terraform plan`, unknown here, saying why.
REFUSED = [
    ("upper(null)", "upper(): the argument must not be null"),
    ("upper([1])", "upper(): the argument: cannot convert tuple to string"),
    ("abs(null)", "abs(): a number is required, got null"),
    ('abs("x")', 'abs(): cannot convert "x" to number; given string must be a decimal representation of a number'),
    ('"v${null}"', "a template cannot interpolate a null value"),
    ('"v${[1]}"', "a template cannot interpolate a tuple"),
    ("null ? 1 : 2", "a condition cannot be null"),
    ("[1] ? 1 : 2", "a condition must be a bool: a bool is required, got tuple"),
]


@pytest.mark.parametrize(("expression", "why"), REFUSED, ids=[c[0] for c in REFUSED])
def test_a_refused_operand_is_unknown_and_says_why(expression: str, why: str, tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text(f"locals {{\n  e = {expression}\n}}\n")
    got = Scope("", {}, read_module(tmp_path).locals, [], directory=tmp_path, root=tmp_path).local("e")
    assert not wholly_known(got)
    assert got.why.endswith(f": {why}")
