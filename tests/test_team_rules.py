"""A team's own rules (issue 28, part 4): `--rules DIR` loads rule modules written against the `Rule` API, judged
in every mode like the built-in rules; the example directory is `examples/rules`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from policies.registry import forget_team_rules
from stackplan.cli import main

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "rules"
NAME = "acme-gpu-require-owner-tag"


@pytest.fixture(autouse=True)
def built_in_rules_after():
    """A team rule registers for the rest of the process that loads it: each test leaves the built-in ones only."""
    yield
    forget_team_rules()


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_example_rule_judges_a_stack_and_an_export_and_takes_a_level(tmp_path, capsys):
    code, out, err = run(capsys, "check", "--stack", "dev", "--rules", str(EXAMPLE), "--json")
    assert code == 0, err
    found = [v for v in json.loads(out)["violations"] if v["policy"] == NAME]
    assert found and all(v["enforcement"] == "advisory" for v in found)
    config = tmp_path / "pc.json"
    config.write_text(json.dumps({NAME: "mandatory"}))
    assert run(capsys, "check", "--stack", "dev", "--rules", str(EXAMPLE), "--policy-config", str(config))[0] == 1
    export = tmp_path / "c.json"
    export.write_text(json.dumps({"clusters": [{"cluster_name": "gpu", "node_type_id": "g5.xlarge", "num_workers": 1,
                                                "spark_version": "15.4.x-gpu-ml-scala2.12",
                                                "custom_tags": {"owner": "ana"}},
                                               {"cluster_name": "gpu2", "node_type_id": "g5.xlarge", "num_workers": 1,
                                                "spark_version": "15.4.x-gpu-ml-scala2.12"}]}))
    code, out, _ = run(capsys, "check", "--cluster-json", str(export), "--rules", str(EXAMPLE), "--format", "sarif")
    results = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == NAME]
    assert [r["locations"][0]["logicalLocations"][0]["name"] for r in results] == ["gpu2"]


def test_without_rules_the_team_rule_is_gone_again(capsys):
    code, out, _ = run(capsys, "check", "--stack", "dev", "--json")
    assert not [v for v in json.loads(out)["violations"] if v["policy"] == NAME]


def test_a_module_that_does_not_load_or_defines_no_rule_is_invalid_input(tmp_path, capsys):
    (tmp_path / "broken.py").write_text("import nope_not_a_module\n")
    code, _, err = run(capsys, "check", "--stack", "dev", "--rules", str(tmp_path))
    assert code == 2 and f"{tmp_path / 'broken.py'}: does not load: ModuleNotFoundError" in err
    (tmp_path / "broken.py").write_text("RULE = 42\n")
    code, _, err = run(capsys, "check", "--stack", "dev", "--rules", str(tmp_path))
    assert code == 2 and "RULE: is missing or not a policies.rule.Rule" in err
    (tmp_path / "broken.py").write_text((EXAMPLE / "require_owner_tag.py").read_text().replace(
        NAME, "databricks-resource-require-tags"))
    code, _, err = run(capsys, "check", "--stack", "dev", "--rules", str(tmp_path))
    assert code == 2 and "is a rule already" in err and "Traceback" not in err


def test_the_pack_takes_the_team_rules_from_its_environment():
    """`pulumi preview --policy-pack policies` with DBX_AI_INFRA_RULES=DIR lists the team's rules as policies."""
    code = (f"import os; os.environ['DBX_AI_INFRA_RULES'] = r'{EXAMPLE}'\n"
            "from policies.pack import build_policies, team_rules_from_environment\n"
            "team_rules_from_environment(); print([p.name for p in build_policies()][-2])")  # before the budget
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == NAME
