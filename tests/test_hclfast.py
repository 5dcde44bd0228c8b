"""Issue 51, item 8: the fast reader of plain HCL (`dbx_ai_infra.sources.hclfast`) gives python-hcl2's own tree or
declines; a module reads the same with it and without it, whatever its strings, comments and heredocs hold.

Every excerpt here was written for these tests (no fetched code)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import hcl2
import pytest

from dbx_ai_infra.sources import hclfast, tfcache, tfload
from dbx_ai_infra.sources.hcl import read_terraform


def slow(text: str) -> Any:
    """python-hcl2's reading, as the reader ran before the fast one: its tree, or the exception it raises."""
    try:
        return hcl2.loads(text, serialization_options=hcl2.utils.SerializationOptions(
            with_comments=False, strip_string_quotes=True))
    except Exception as exc:  # noqa: BLE001 - any refusal: the fast reader must have declined it
        return exc


def fast(text: str) -> Any:
    """The fast reader, where only its own `Decline` may end a reading early (an unforeseen error is a bug here)."""
    try:
        return hclfast._Reader(text + "\n").body(top=True)
    except hclfast.Decline:
        return None


#: Read by the fast reader, each the same as python-hcl2 reads it.
PLAIN = [
    'a = 1\nb = 1.50\nc = 007\nd = true\ne = null\nf = "x"\n',
    'a = foo\nb = var.x\nc = local.m["k"].y[0]\nd = x.0\ne = x.true\nf = each.value.b-c\n',
    'name = "team-${var.env}-${local.n[0]}"\nq = "a \\"quoted\\" \\\\ \\n \\u0041 \\q"\n',
    's = "$ and % and 100%"\nt = "${ var.x }"\nu = ""\n',
    'a = merge(local.tags, {"k" = 1, b = [1, "two"]}, lookup(var.m, "k", null))\n',
    'a = f(\n  1,\n  2,\n)\nb = f()\nc = f(\n)\nd = "${f("q")}"\n',
    'tags = {\n  # a comment\n  a = var.x // another\n  "b-c" = "y" /* inline */\n  d: 2,\n  e = { f = [] }\n}\n',
    'list = [\n  1,\n  var.x,\n  [],\n]\nempty = {}\n',
    'resource "databricks_cluster" "c" {\n  num_workers = 2\n  autoscale {\n    min_workers = 1\n  }\n'
    '  library {\n    pypi {\n      package = "torch==2.3.0"\n    }\n  }\n  library {\n    jar = "x.jar"\n  }\n}\n',
    'x "a\\tb" label {\n}\none { a = 1 }\nfor_each = 1\nin = 2\ntrue = 3\n',
    '# only a comment\n/* a block\n comment with { and } */\n// and resource "aws_x" "y" {\n',
    'a = "resource \\"aws_s3_bucket\\" \\"b\\" { } }}} {{"\nb = "#not a comment // nor this /* */"\n',
    'variable "w" {\n  type    = number\n  default = 3\n}\nlocals {\n  n = "c-${var.w}"\n}\n',
    'a = 1\r\nb = {\r\n  c = 2\r\n}\r\n',
    'a = var.x > 0 ? var.x : 1\nb = var.x + 1\nc = length(var.l) -1\nd = 1-1\ne = a == "x" && b != 2 || c >= 3\n'
    'f = var.a ?\n  "yes" :\n  "no"\ng = var.n * 2 / 3 % 4 - 5 <= 6\nh = "${var.on ? "a" : "b"}"\n'
    'i = {k = var.x == null ? {} : var.x}\nj = f(var.a > 1, [x < 2])\nk = a ? b : c ? d : e\nl = x +\n  y\n',
    'provider "databricks" {\n  host = var.host\n}\nterraform {\n  required_providers {\n'
    '    databricks = {\n      source = "databricks/databricks"\n    }\n  }\n}\n',
]

#: Declined (python-hcl2 reads them): constructs outside the subset, and text python-hcl2 refuses.
DECLINED = [
    'a = (var.x > 0 ? var.x : 1)\n', 'a = 1 + -1\n', 'a = -1\n', 'a = x\n  ? 1 : 2\n', 'a = x ? 1\n  + 2 : 3\n',
    'a = x << 2\n', 'a = x & y\n', 'a = x ? 1\nb = 2\n', 'a = "${x\n+ 1}"\n', 'a = f(x\n  + 1)\n', 'a = !var.b\n', 'a = (var.x)\n',
    'a = [for x in var.l : x]\n', 'a = {for k, v in var.m : k => v}\n', 'a = var.l[*].id\n', 'a = var.l.*.id\n',
    'a = 1e5\n', 'a = "%{ if var.b }x%{ endif }"\n', 'a = "$${literal}"\n', 'a = f(var.l...)\n',
    'a = provider::p::f(1)\n', 'a = f(1).b\n', 'a = {(var.k) = 1}\n', 'a = {"${var.k}" = 1}\n',
    'policy = <<EOT\n{ "Statement": [ { "Effect": "Allow" } ] }\nresource "aws_x" "y" {\nEOT\n',
    'policy = <<-EOT\n  { }\n  EOT\n', 'a = x\n  + 1\n', 'a = 1 b = 2\n',
    'a = 1\na {\n}\n', 'a {\n}\na = 1\n', 'resource "x" "${var.y}" {\n}\n',
    'resource {{{\n', 'a = \n', 'a = "unterminated\n', 'a = [1,,2]\n', 'a = {b = 1,, c = 2}\n', '}\n',
    'a = x.01\n', 'a = x.0.1\n', 'a = 1x\n', 'a = "a\\\nb"\n', 'a = f(1, 2\n', 'b {\n  c = 1\n',
    '/* unterminated comment\n', 'a = x. y\n', 'a = in\n', 'a = {in = 1}\n', 'a = true.x\n',
]


@pytest.mark.parametrize("text", PLAIN)
def test_plain_hcl_is_read_fast_as_python_hcl2_reads_it(text: str) -> None:
    got = fast(text)
    assert got is not None, "declined"
    assert got == slow(text)


@pytest.mark.parametrize("text", DECLINED)
def test_the_rest_is_declined_for_python_hcl2(text: str) -> None:
    assert fast(text) is None
    assert hclfast.loads(text) is None


def _mutants(rng: random.Random, texts: list[str], n: int) -> list[str]:
    pieces = list('{}[]()"=:,.\n#/*$%~<>-+!?\\ \tab09') + ["${", "//", "/*", "*/", "<<EOT\n", "\nEOT\n", "...",
                                                          "::", ".*", "[*]", "for ", " in ", "true", "\r\n"]
    out = []
    for _ in range(n):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(text) + 1)
            text = text[:i] + (rng.choice(pieces) if rng.random() < 0.8 else "") + text[i + rng.randint(0, 3):]
        out.append(text)
    return out


def test_damaged_text_is_either_read_as_python_hcl2_reads_it_or_declined() -> None:
    """Random edits of the excerpts (a fixed seed): whatever the fast reader accepts, python-hcl2 reads the same,
    never an error; and the reader declines, never raises, on the rest."""
    accepted = 0
    for text in _mutants(random.Random(51), PLAIN, 600):
        got = fast(text)
        if got is not None:
            accepted += 1
            assert got == slow(text), text
    assert accepted > 100  # the edits leave much of it plain: the comparison ran


def test_an_other_python_hcl2_release_or_the_switch_turns_the_fast_reader_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hclfast, "SERIALIZES_AS", "0.0.0")
    hclfast.serializes_as_installed.cache_clear()
    try:
        assert tfload.quick_text(PLAIN[0], "hcl") is None
    finally:
        monkeypatch.undo()
        hclfast.serializes_as_installed.cache_clear()
    assert tfload.quick_text(PLAIN[0], "hcl") == slow(PLAIN[0])
    monkeypatch.setenv(tfload.NO_FAST_ENV, "1")  # and it can be turned off
    assert tfload.quick_text(PLAIN[0], "hcl") is None


#: A module whose cluster reads values through the constructs a scanner could get wrong: braces and block headers
#: inside strings, comments and heredocs, a nested block, an override file and a .tf.json file.
MODULE = {
    "main.tf": '''# resource "databricks_cluster" "commented" { num_workers = 9 }
/* resource "databricks_cluster" "also_commented" {
   } */
locals {
  note  = "resource \\"databricks_cluster\\" \\"fake\\" { num_workers = 7 }"
  brace = "}}} {"
}

resource "aws_iam_role" "r" {
  assume_role_policy = <<EOT
{ "Statement": [] }
resource "databricks_cluster" "in_heredoc" {
EOT
}

resource "databricks_cluster" "c" {
  cluster_name  = "c ${local.brace}"
  spark_version = "15.4.x-scala2.12"
  node_type_id  = "i3.xlarge"
  num_workers   = var.workers > 0 ? var.workers : 1
  custom_tags   = { note = local.note }
  autoscale {
    min_workers = 1
    max_workers = 4
  }
}
''',
    "variables.tf": 'variable "workers" {\n  type    = number\n  default = 2\n}\n',
    "override.tf": 'resource "databricks_cluster" "c" {\n  autotermination_minutes = 30\n}\n',
    "extra.tf.json": '{"resource": {"databricks_cluster": {"j": {"cluster_name": "${local.brace}", '
                     '"spark_version": "15.4.x-scala2.12", "node_type_id": "i3.xlarge", "num_workers": 1}}}}',
}


def test_a_module_reads_the_same_with_the_fast_reader_and_without(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    code = tmp_path / "code"
    code.mkdir()
    for name, text in MODULE.items():
        (code / name).write_text(text)
    monkeypatch.setenv(tfcache.NO_CACHE_ENV, "1")
    with_fast, lines_fast, notes_fast = read_terraform(str(code))
    monkeypatch.setattr(hclfast, "serializes_as_installed", lambda: False)
    without, lines, notes = read_terraform(str(code))
    assert (with_fast, lines_fast, notes_fast) == (without, lines, notes)
    clusters = {c["address"]: c["change"]["after"] for c in without["resource_changes"]}
    assert set(clusters) == {"databricks_cluster.c", "databricks_cluster.j"}
    assert clusters["databricks_cluster.c"]["cluster_name"] == "c }}} {"
    assert clusters["databricks_cluster.c"]["autotermination_minutes"] == 30
    assert clusters["databricks_cluster.c"]["autoscale"] == [{"min_workers": 1, "max_workers": 4}]
    assert clusters["databricks_cluster.j"]["cluster_name"] == "}}} {"


def test_plain_files_are_not_given_to_python_hcl2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The point of the reader: a plain module's files never reach lark (a file it declines still does)."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "a.tf").write_text(MODULE["variables.tf"] + PLAIN[8])
    (code / "b.tf").write_text('locals {\n  n = [for w in [var.workers] : w]\n}\n')
    monkeypatch.setenv(tfcache.NO_CACHE_ENV, "1")
    given: list[str] = []
    real = hcl2.load
    monkeypatch.setattr(hcl2, "load", lambda f, **kw: given.append(f.getvalue()) or real(f, **kw))
    read_terraform(str(code))
    assert given == ['locals {\n  n = [for w in [var.workers] : w]\n}\n']
