"""A team's own rules (issue 28, part 4): `--rules DIR` loads rule modules written against the `Rule` API, judged
in every mode like the built-in rules; the example directory is `examples/rules`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

from dbx_ai_infra.policies.registry import forget_team_rules

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "examples" / "rules"
NAME = "acme-gpu-require-owner-tag"


@pytest.fixture(autouse=True)
def built_in_rules_after():
    """A team rule registers for the rest of the process that loads it: each test leaves the built-in ones only."""
    yield
    forget_team_rules()


def test_the_example_rule_judges_a_stack_and_an_export_and_takes_a_level(tmp_path, capsys):
    code, out, err = run_cli(capsys, "check", "--stack", "dev", "--rules", str(EXAMPLE), "--json")
    assert code == 0, err
    found = [v for v in json.loads(out)["violations"] if v["policy"] == NAME]
    assert found and all(v["enforcement"] == "advisory" for v in found)
    config = tmp_path / "pc.json"
    config.write_text(json.dumps({NAME: "mandatory"}))
    assert run_cli(capsys, "check", "--stack", "dev", "--rules", str(EXAMPLE), "--policy-config", str(config))[0] == 1
    export = tmp_path / "c.json"
    export.write_text(json.dumps({"clusters": [{"cluster_name": "gpu", "node_type_id": "g5.xlarge", "num_workers": 1,
                                                "spark_version": "17.3.x-gpu-ml-scala2.13",
                                                "custom_tags": {"owner": "ana"}},
                                               {"cluster_name": "gpu2", "node_type_id": "g5.xlarge", "num_workers": 1,
                                                "spark_version": "17.3.x-gpu-ml-scala2.13"}]}))
    code, out, _ = run_cli(capsys, "check", "--cluster-json", str(export), "--rules", str(EXAMPLE), "--format", "sarif")
    results = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == NAME]
    assert [r["locations"][0]["logicalLocations"][0]["name"] for r in results] == ["gpu2"]


def test_without_rules_the_team_rule_is_gone_again(capsys):
    code, out, _ = run_cli(capsys, "check", "--stack", "dev", "--json")
    assert not [v for v in json.loads(out)["violations"] if v["policy"] == NAME]


def test_a_module_that_does_not_load_or_defines_no_rule_is_invalid_input(tmp_path, capsys):
    (tmp_path / "broken.py").write_text("import nope_not_a_module\n")
    code, _, err = run_cli(capsys, "check", "--stack", "dev", "--rules", str(tmp_path))
    assert code == 2 and f"{tmp_path / 'broken.py'}: does not load: ModuleNotFoundError" in err
    (tmp_path / "broken.py").write_text("RULE = 42\n")
    code, _, err = run_cli(capsys, "check", "--stack", "dev", "--rules", str(tmp_path))
    assert code == 2 and "RULE: is missing or not a dbx_ai_infra.policies.rule.Rule" in err
    (tmp_path / "broken.py").write_text((EXAMPLE / "require_owner_tag.py").read_text().replace(
        NAME, "databricks-resource-require-tags"))
    code, _, err = run_cli(capsys, "check", "--stack", "dev", "--rules", str(tmp_path))
    assert code == 2 and "is a rule already" in err and "Traceback" not in err


def test_a_team_stack_rule_is_invalid_input(tmp_path, capsys):
    """A stack rule is built in (the pipeline, cost and the pack build the stack's view it judges): a team's module
    declaring one is refused, naming the field, not run as a resource rule that never judges anything."""
    (tmp_path / "stacky.py").write_text(
        "from dbx_ai_infra.policies.rule import Rule\n"
        "RULE = Rule(name='team-stack', description='d', enforcement='mandatory', remediation='r', scope='stack',\n"
        "            stack_check=lambda stack, config: [])\n")
    code, _, err = run_cli(capsys, "check", "--stack", "dev", "--rules", str(tmp_path))
    assert code == 2 and f"{tmp_path / 'stacky.py'}: RULE.scope: is 'stack'" in err and "Traceback" not in err


def test_the_pack_takes_the_team_rules_from_its_environment():
    """`pulumi preview --policy-pack policies` with DBX_AI_INFRA_RULES=DIR lists the team's rules as policies."""
    code = (f"import os; os.environ['DBX_AI_INFRA_RULES'] = r'{EXAMPLE}'\n"
            "from dbx_ai_infra.policies.pack import build_policies, team_rules_from_environment\n"
            "team_rules_from_environment(); print([p.name for p in build_policies()][-2])")  # before the budget
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == NAME


# --- issue 44, item 2: a team rule never ends the gate ---------------------------------------------------------------

RULE_TEMPLATE = '''
import os
import sys

from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER, JOB
from dbx_ai_infra.policies.rule import Rule

{before}


def check(view, config):
{body}


RULE = Rule(name="acme-broken", description="a rule that breaks", enforcement="mandatory",
            resource_types=(CLUSTER, JOB), check=check, remediation="none")
'''

BROKEN = {
    "sys.exit at check": ("", "    sys.exit(0)", "called sys.exit(0)"),
    "exit() at check": ("", "    exit()", "called sys.exit(None)"),
    "os._exit at check": ("", "    os._exit(0)", "called os._exit(0)"),
    "raises": ("", "    raise KeyError('boom')", "raised KeyError"),
    "returns None": ("", "    print('hi')", "returned None, not a list of messages"),
    "returns a string": ("", "    return 'oops'", "returned str, not a list of messages"),
    "returns numbers": ("", "    return [1, 2]", "returned list, not a list of messages"),
    "wrong signature": ("", "    return []\n\n\ndef check(view):\n    return []", "raised TypeError"),
    "deeply nested": ("", "    x = []\n    for _ in range(100000):\n        x = [x]\n    return x",
                      "returned list, not a list of messages"),
}


def _rules_dir(tmp_path: Path, before: str, body: str) -> Path:
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "broken.py").write_text(RULE_TEMPLATE.format(before=before, body=body))
    return folder


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_team_rule_is_exit_2_naming_the_rule_its_file_and_the_resource(tmp_path, case):
    """In a subprocess, as a pipeline runs it: an exit inside a rule would end the real process with its code."""
    before, body, said = BROKEN[case]
    folder = _rules_dir(tmp_path, before, body)
    sarif = tmp_path / "out.sarif"
    done = subprocess.run([sys.executable, "-m", "stackplan", "check", "--stack", "dev", "--rules", str(folder),
                           "--format", "sarif", "--out", str(sarif)], cwd=REPO, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 2, (case, done.returncode, done.stderr)
    assert said in done.stderr and "RULE acme-broken" in done.stderr and "broken.py" in done.stderr, done.stderr
    assert "(on dev-" in done.stderr and "Traceback" not in done.stderr
    assert not sarif.exists()  # nothing written: the gate did not pass


def test_os_exit_at_import_is_exit_2_naming_the_file(tmp_path):
    folder = _rules_dir(tmp_path, "os._exit(0)", "    return []")
    done = subprocess.run([sys.executable, "-m", "stackplan", "check", "--stack", "dev", "--rules", str(folder)],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2 and "broken.py" in done.stderr and "called os._exit(0)" in done.stderr


def test_a_rule_that_prints_never_corrupts_the_json_on_stdout(tmp_path, capsys):
    folder = _rules_dir(tmp_path, "print('loading')", "    print('judging', view.resource_type)\n    return []")
    code, out, err = run_cli(capsys, "check", "--stack", "dev", "--rules", str(folder), "--json")
    assert code == 0 and json.loads(out)["stack"] == "dev"  # stdout is the JSON alone
    assert "loading" in err and "judging" in err


LEGACY_RULE = '''
from dbx_ai_infra.dbxtypes.vocabulary import CLUSTER
from dbx_ai_infra.policies.rule import Rule


def check(view, config):
    return [f"over {config['limit']}. Fix: lower it."] if (view.props.get("num_workers") or 0) > config["limit"] else []


RULE = Rule(name="acme-legacy-limit", description="d", enforcement="mandatory", resource_types=(CLUSTER,),
            check=check, remediation="lower it", thresholds={"limit": 3},
            threshold_schema={"limit": {"type": "integer", "minimum": 1, "description": "a limit"}})
'''


def test_typed_thresholds_take_the_policy_config_and_rules_of_the_untyped_form_still_load(tmp_path, capsys):
    """The example's typed threshold (a `Thresholds` model) is set by the policy config and checked by its field; a
    team rule written before typed thresholds (plain ``thresholds=`` and ``threshold_schema=``) loads and judges."""
    export = tmp_path / "c.json"
    export.write_text(json.dumps({"clusters": [{"cluster_name": "gpu", "node_type_id": "g5.xlarge", "num_workers": 5,
                                                "spark_version": "17.3.x-gpu-ml-scala2.13",
                                                "custom_tags": {"owner": "ana"}}]}))
    config = tmp_path / "pc.json"
    config.write_text(json.dumps({NAME: {"enforcementLevel": "mandatory", "tag": "team"}}))
    code, out, _ = run_cli(capsys, "check", "--cluster-json", str(export), "--rules", str(EXAMPLE), "--policy-config",
                       str(config), "--json")
    assert code == 1 and any("'team' tag" in v["message"] for v in json.loads(out)["violations"])
    config.write_text(json.dumps({NAME: {"tag": ""}}))
    code, _, err = run_cli(capsys, "check", "--cluster-json", str(export), "--rules", str(EXAMPLE), "--policy-config",
                       str(config))
    assert code == 2 and f"{NAME}.tag" in err and "at least 1 character" in err
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "limit.py").write_text(LEGACY_RULE)
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(export), "--rules", str(legacy), "--json")
    assert code == 1, err
    assert [v["message"] for v in json.loads(out)["violations"] if v["policy"] == "acme-legacy-limit"] == \
        ["over 3. Fix: lower it."]


KIND_RULE = '''
from dbx_ai_infra.dbxtypes.vocabulary import JOB
from dbx_ai_infra.policies.rule import ResourceView, Rule


def check(view, config):
    return [f"handed a {type(view).__name__}. Fix: none."]


RULE = Rule(name="acme-job-kind", description="d", enforcement="advisory", resource_types=(JOB,), check=check,
            remediation="none", takes=(ResourceView,))
'''


def test_a_team_rule_is_handed_only_the_kind_of_view_it_takes(tmp_path, capsys):
    """Issue 56, item 5: a rule declares the views it takes (``takes``); a job's cluster definitions never reach a
    rule that takes the job's own view, in the team's process as in this one."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "kind.py").write_text(KIND_RULE)
    cluster = {"spark_version": "15.4.x-scala2.12", "node_type_id": "m5.xlarge", "num_workers": 1}
    export = tmp_path / "jobs.json"
    export.write_text(json.dumps({"jobs": [{"job_id": 1, "settings": {
        "name": "nightly", "job_clusters": [{"job_cluster_key": "main", "new_cluster": cluster}],
        "tasks": [{"task_key": "t", "job_cluster_key": "main", "notebook_task": {"notebook_path": "/n"}}]}}]}))
    code, out, err = run_cli(capsys, "check", "--cluster-json", str(export), "--rules", str(tmp_path / "rules"), "--json")
    assert code == 1, err  # the job's cluster lacks the required tags (a built-in rule)
    assert [v["message"] for v in json.loads(out)["violations"] if v["policy"] == "acme-job-kind"] == \
        ["handed a ResourceView. Fix: none."]
