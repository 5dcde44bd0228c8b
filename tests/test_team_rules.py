"""A team's own rules (issue 28, part 4): `--rules DIR` loads rule modules written against the `Rule` API, judged
in every mode like the built-in rules; the example directory is `examples/rules`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "rules"
NAME = "acme-gpu-require-owner-tag"


def stackplan(*argv: str) -> subprocess.CompletedProcess[str]:
    """A process of its own: a team rule registers for the rest of the process that loads it."""
    return subprocess.run([sys.executable, "-m", "stackplan", *argv], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def test_the_example_rule_judges_a_stack_and_an_export_and_takes_a_level(tmp_path):
    done = stackplan("check", "--stack", "dev", "--rules", str(EXAMPLE), "--json")
    assert done.returncode == 0, done.stderr
    found = [v for v in json.loads(done.stdout)["violations"] if v["policy"] == NAME]
    assert found and all(v["enforcement"] == "advisory" for v in found)
    config = tmp_path / "pc.json"
    config.write_text(json.dumps({NAME: "mandatory"}))
    assert stackplan("check", "--stack", "dev", "--rules", str(EXAMPLE), "--policy-config", str(config)).returncode == 1
    export = tmp_path / "c.json"
    export.write_text(json.dumps({"clusters": [{"cluster_name": "gpu", "node_type_id": "g5.xlarge", "num_workers": 1,
                                                "spark_version": "15.4.x-gpu-ml-scala2.12",
                                                "custom_tags": {"owner": "ana"}},
                                               {"cluster_name": "gpu2", "node_type_id": "g5.xlarge", "num_workers": 1,
                                                "spark_version": "15.4.x-gpu-ml-scala2.12"}]}))
    done = stackplan("check", "--cluster-json", str(export), "--rules", str(EXAMPLE), "--format", "sarif")
    results = [r for r in json.loads(done.stdout)["runs"][0]["results"] if r["ruleId"] == NAME]
    assert [r["locations"][0]["logicalLocations"][0]["name"] for r in results] == ["gpu2"]


def test_a_module_that_does_not_load_or_defines_no_rule_is_invalid_input(tmp_path):
    (tmp_path / "broken.py").write_text("import nope_not_a_module\n")
    done = stackplan("check", "--stack", "dev", "--rules", str(tmp_path))
    assert done.returncode == 2 and f"{tmp_path / 'broken.py'}: does not load: ModuleNotFoundError" in done.stderr
    (tmp_path / "broken.py").write_text("RULE = 42\n")
    done = stackplan("check", "--stack", "dev", "--rules", str(tmp_path))
    assert done.returncode == 2 and "RULE: is missing or not a policies.rule.Rule" in done.stderr
    (tmp_path / "broken.py").write_text((EXAMPLE / "require_owner_tag.py").read_text().replace(
        NAME, "databricks-resource-require-tags"))
    done = stackplan("check", "--stack", "dev", "--rules", str(tmp_path))
    assert done.returncode == 2 and "is a rule already" in done.stderr and "Traceback" not in done.stderr


def test_the_pack_takes_the_team_rules_from_its_environment():
    """`pulumi preview --policy-pack policies` with DBX_AI_INFRA_RULES=DIR lists the team's rules as policies."""
    code = (f"import os; os.environ['DBX_AI_INFRA_RULES'] = r'{EXAMPLE}'\n"
            "from policies.pack import build_policies, team_rules_from_environment\n"
            "team_rules_from_environment(); print([p.name for p in build_policies()][-2])")  # before the budget
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == NAME
