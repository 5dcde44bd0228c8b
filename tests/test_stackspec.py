"""Invalid stacks: each exits 2 with one message naming the file, the field and the fix; nothing written."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BASE_CONFIG, config_for

from dbx_ai_infra.cli.cli import main
from dbx_ai_infra.engine.engine import ProgramError, run_program
from dbx_ai_infra.stackspec import LoadedStack, load_stack

REPO = Path(__file__).resolve().parent.parent


def with_changes(**changes):
    """BASE_CONFIG with dotted-path changes: {"inference.min_workers": 12}; value None deletes."""
    config = copy.deepcopy(BASE_CONFIG)
    for dotted, value in changes.items():
        section, *rest = dotted.split("__")
        key = f"dbx-ai-infra:{section}"
        if not rest:
            if value is None:
                config.pop(key)
            else:
                config[key] = value
            continue
        node = config[key]
        for part in rest[:-1]:
            node = node[part]
        if value is None:
            node.pop(rest[-1])
        else:
            node[rest[-1]] = value
    return config


INVALID = [
    ("unknown key", with_changes(training__num_worker=2),
     ["dbx-ai-infra:training.num_worker", "is not a known key", "allowed keys here: num_workers"]),
    ("min > max", with_changes(inference__min_workers=12, inference__max_workers=10),
     ["dbx-ai-infra:inference", "max_workers must be above min_workers (the autoscale API needs max > min), got min_workers 12 and max_workers 10"]),
    ("zero workers", with_changes(training__num_workers=0),
     ["dbx-ai-infra:training.num_workers", "greater than or equal to 1", "got 0"]),
    ("negative workers", with_changes(inference__min_workers=-1), ["dbx-ai-infra:inference.min_workers", "got -1"]),
    ("wrong type", with_changes(training__num_workers="two"), ["training.num_workers", "integer", "'two'"]),
    ("unknown cloud", with_changes(cloud="oci"), ["dbx-ai-infra:cloud", "'aws', 'azure' or 'gcp'", "got 'oci'"]),
    ("family the cloud lacks", config_for("gcp", gpu_family="t4"),
     ["dbx-ai-infra:gpu_family", "'t4' has no Databricks node type on gcp", "Fix: use one of: a100"]),
    ("model too large for the family", with_changes(training__model={"params_billions": 400, "precision": "fp32"}),
     ["dbx-ai-infra:training.model", "6400"]),
    ("pinned node of another cloud", with_changes(inference__node_type_id="Standard_NC4as_T4_v3"),
     ["dbx-ai-infra:inference.node_type_id", "azure"]),
    ("pinned node too small", with_changes(gpu_family="t4", inference__node_type_id="g4dn.xlarge"),
     ["dbx-ai-infra:inference.node_type_id", "16.8"]),
    ("missing tag", with_changes(tags={"workload": "genai"}), ["dbx-ai-infra:tags", "cost_center"]),
    ("reserved tag", with_changes(tags={"workload": "a", "cost_center": "b", "workload_type": "x"}),
     ["dbx-ai-infra:tags", "workload_type"]),
    # a version range is no pin (a bare name is: it takes the runtime's pin, tests/test_runtime_libraries.py)
    ("unpinned library", with_changes(inference__libraries=["vllm>=0.5"]), ["inference.libraries", "package==x.y.z"]),
    ("no workload", with_changes(training=None, inference=None, dev=None), ["no workload"]),
    ("cpu runtime", with_changes(runtime="17.3.x-scala2.13"), ["dbx-ai-infra:runtime", "gpu-ml"]),
    ("missing field", with_changes(single_user_name=None), ["dbx-ai-infra:single_user_name", "Field required"]),
    ("checkpoint volume unknown", with_changes(training__checkpoint_volume="models.nope"),
     ["checkpoint_volume", "models.nope", "models.checkpoints"]),
    ("pool without workload", with_changes(dev=None, instance_pools={"dev": {"min_idle_instances": 1}}),
     ["instance_pools.dev"]),
    ("external volume without location",
     with_changes(unity_catalog={"schemas": {"models": {"volumes": [{"name": "hf_cache", "volume_type": "EXTERNAL"}, "checkpoints"]}}}),
     ["unity_catalog.schemas.models.volumes[0]", "storage_location"]),
    ("grant on nothing", with_changes(unity_catalog={"grants": [{"principal": "x", "privileges": ["USE_SCHEMA"], "securable": "nope"}]}),
     ["unity_catalog", "'nope' names no schema"]),
]


@pytest.mark.parametrize("label, config, expected", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_stack_exits_2_naming_file_field_and_fix(label, config, expected, write_stack, capsys, tmp_path):
    path = write_stack(config)
    out = tmp_path / "plan.json"
    code = main(["preview", "--stack", str(path), "--json", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert str(path.name) in err
    for fragment in expected:
        assert fragment in err, f"{fragment!r} not in {err!r}"
    assert "Traceback" not in err
    assert not out.exists()


def test_config_keys_outside_the_namespace(write_stack, capsys):
    config = {**BASE_CONFIG, "cloud": "aws", "other:gpu_family": "a10g", "databricks:host": "https://x"}
    code = main(["check", "--stack", str(write_stack(config))])
    err = capsys.readouterr().err
    assert code == 2
    # a bare key is the project's, as the CLI namespaces it: here it repeats dbx-ai-infra:cloud
    assert "dbx-ai-infra:cloud: is given twice (as cloud and dbx-ai-infra:cloud" in err
    assert "other:gpu_family: is outside the project namespace 'dbx-ai-infra'" in err
    assert "databricks:host" not in err  # provider config is allowed


FILE_CASES = [
    ("empty", "", "the file is empty"),
    ("yaml syntax", "config:\n  dbx-ai-infra:cloud: aws\n   bad: [1\n", "YAML syntax error at line 3, column"),
    ("not a mapping", "- 1\n- 2\n", "holds a list, not a stack"),
    ("no config", "secretsprovider: passphrase\n", "config: is missing"),
    ("unknown top key", "config: {}\nstack: x\n", "stack: is not a stack file key"),
]


@pytest.mark.parametrize("label, text, expected", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_bad_stack_files(label, text, expected, write_stack, capsys):
    code = main(["preview", "--stack", str(write_stack(text=text))])
    err = capsys.readouterr().err
    assert code == 2 and expected in err and "Fix:" in err


def test_non_utf8_and_huge_files(tmp_path, capsys):
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_bytes(b"config:\n  dbx-ai-infra:cloud: \xff\xfe\n")
    assert main(["preview", "--stack", str(bad)]) == 2
    assert "not UTF-8" in capsys.readouterr().err
    huge = tmp_path / "Pulumi.huge.yaml"
    huge.write_text("config:\n" + "# padding\n" * 200_000)
    assert main(["preview", "--stack", str(huge)]) == 2
    assert "a stack file is at most" in capsys.readouterr().err


def test_missing_stack_names_the_available_ones(capsys):
    assert main(["preview", "--stack", "nope"]) == 2
    err = capsys.readouterr().err
    assert "stack 'nope' not found" in err and "dev" in err and "prod" in err
    assert main(["preview", "--stack", "missing/Pulumi.x.yaml"]) == 2
    assert "stack file not found" in capsys.readouterr().err


def test_the_program_raises_the_same_error_before_registering_anything(write_stack):
    """Under `pulumi up` the config comes from the CLI, not from a file we validated first."""
    good = load_stack(str(write_stack(BASE_CONFIG)))
    bad_config = {**good.config, "dbx-ai-infra:inference": '{"min_workers": 12, "max_workers": 10, '
                                                           '"model": {"params_billions": 7}}'}
    with pytest.raises(ProgramError, match=r"max_workers must be above min_workers \(the autoscale API needs max > min\), got min_workers 12 and max_workers 10") as info:
        run_program(LoadedStack(good.name, good.path, bad_config, good.resolved), from_config=True)
    assert "stacks/Pulumi.test.yaml" in str(info.value)


def test_cli_strings_validate_like_file_values(write_stack):
    """The program sees config as the Pulumi CLI passes it (strings, JSON objects): same spec."""
    from dbx_ai_infra.stackspec import spec_from_config

    loaded = load_stack(str(write_stack(BASE_CONFIG)))
    assert spec_from_config(loaded.config, "x", stack=loaded.name) == loaded.spec
    # the stack's name gives the catalog's default (issue 52); without it the catalog is plain ai
    assert loaded.spec.unity_catalog.catalog == "ai_test"
    assert spec_from_config(loaded.config, "x").unity_catalog.catalog == "ai"


def test_no_traceback_from_a_real_process(write_stack):
    path = write_stack(with_changes(inference__min_workers=12, inference__max_workers=10))
    proc = subprocess.run([sys.executable, "-m", "stackplan", "preview", "--stack", str(path)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "max_workers must be above min_workers" in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_a_valid_file_is_not_an_error(write_stack):
    loaded = load_stack(str(write_stack(BASE_CONFIG)))
    assert loaded.name == "test" and loaded.spec.inference.max_workers == 6
    assert loaded.resolved.workloads["inference"].node.node_type_id == "g5.xlarge"


# --- the catalog's managed location (issue 26) -------------------------------------------------------------------------

def _uc_config(**uc):
    from conftest import BASE_CONFIG

    return {**BASE_CONFIG, "dbx-ai-infra:unity_catalog": {**BASE_CONFIG.get("dbx-ai-infra:unity_catalog", {}), **uc}}


def test_storage_root_goes_to_the_catalog_and_must_be_the_clouds_storage(write_stack, capsys):
    from dbx_ai_infra.engine.pipeline import build

    built = build(str(write_stack(_uc_config(storage_root="s3://bucket/uc"))))
    (catalog,) = [r for r in built.plan.resources if r.type == "databricks:index/catalog:Catalog"]
    assert catalog.inputs["storageRoot"] == "s3://bucket/uc"
    # what the managed location needs before `pulumi up` is named (issue 52, item 2), nothing else is said
    assert [n for n in built.notes if "storage_root" in n] == [n for n in built.notes if
                                                               "storage_root s3://bucket/uc: prerequisite, neither "
                                                               "created nor named" in n] != []
    assert main(["check", "--stack", str(write_stack(_uc_config(storage_root="gs://bucket/uc")))]) == 2
    err = capsys.readouterr().err
    assert "storage_root 'gs://bucket/uc' is not aws storage; use a s3:// URI" in err


def test_without_a_location_or_an_existing_catalog_the_preview_says_the_catalog_may_be_refused(write_stack, capsys):
    assert main(["preview", "--stack", str(write_stack(_uc_config()))]) in (0, 1)
    assert "note: dbx-ai-infra:unity_catalog: neither storage_root nor existing_catalog is set" in \
        capsys.readouterr().err


def test_an_existing_catalog_is_not_created_and_its_grants_are_added_per_principal(write_stack):
    from dbx_ai_infra.engine.pipeline import build

    config = _uc_config(existing_catalog=True, grants=[{"principal": "ml-engineers", "privileges": ["USE_CATALOG"]},
                                                      {"principal": "ml-engineers", "securable": "models",
                                                       "privileges": ["USE_SCHEMA"]}])
    plan = build(str(write_stack(config))).plan
    types = [r.type for r in plan.resources]
    assert "databricks:index/catalog:Catalog" not in types
    grants = [r.inputs for r in plan.resources if r.type == "databricks:index/grant:Grant"]
    assert {"principal": "ml-engineers", "privileges": ["USE_CATALOG"], "catalog": "ai_test"} in grants
    # the catalog is not the stack's: no authoritative Grants on it
    assert not [r for r in plan.resources if r.type == "databricks:index/grants:Grants" and "catalog" in r.inputs]
    assert {r.inputs["catalogName"] for r in plan.resources if r.type == "databricks:index/schema:Schema"} == {
        "ai_test"}


def test_an_existing_catalog_keeps_its_own_location(write_stack, capsys):
    config = _uc_config(existing_catalog=True, storage_root="s3://bucket/uc")
    assert main(["check", "--stack", str(write_stack(config))]) == 2
    assert "storage_root and existing_catalog are both set" in capsys.readouterr().err


def test_an_unquoted_impossible_date_is_invalid_input_naming_the_field(write_stack, capsys):
    """`expires: 2027-02-30` was "unexpected ValueError" (exit 1): the YAML reader made it a date and failed."""
    from conftest import BASE_CONFIG

    text = write_stack(BASE_CONFIG).read_text() + (
        "  dbx-ai-infra:exceptions:\n  - rule: databricks-cluster-require-autotermination\n"
        "    resource: test-dev\n    reason: x\n    expires: 2027-02-30\n")
    code = main(["preview", "--stack", str(write_stack(text=text))])
    err = capsys.readouterr().err
    assert code == 2 and "dbx-ai-infra:exceptions[0].expires" in err and "Fix: write a real date, YYYY-MM-DD." in err


def test_an_unquoted_date_where_a_string_belongs_is_that_string(write_stack):
    """YAML 1.2's core schema (the Pulumi CLI's) has no timestamps: `single_user_name: 2027-02-30` is a string."""
    from conftest import BASE_CONFIG

    from dbx_ai_infra.engine.pipeline import build

    text = write_stack(BASE_CONFIG).read_text().replace("ml@example.com", "2027-02-30")
    built = build(str(write_stack(text=text)))
    assert {r.inputs.get("singleUserName") for r in built.plan.resources
            if r.type == "databricks:index/cluster:Cluster"} == {"2027-02-30"}


def test_the_installed_stackplan_command_enters_where_python_m_stackplan_does(tmp_path):
    """`python -m stackplan` worked only from the repository root; the set-up installs `stackplan` into .venv."""
    command = Path(sys.executable).parent / "stackplan"
    assert command.exists(), "the set-up (make install) installs the stackplan command"
    stack = tmp_path / "elsewhere" / "Pulumi.mine.yaml"
    stack.parent.mkdir()
    stack.write_text((REPO / "stacks" / "Pulumi.dev.yaml").read_text())
    out = tmp_path / "plan.json"
    done = subprocess.run([str(command), "preview", "--stack", str(stack), "--json", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    import json

    assert json.loads(out.read_text())["stack"] == "mine"
    bad = subprocess.run([str(command), "preview", "--stack", str(tmp_path / "Pulumi.none.yaml")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and "Traceback" not in bad.stderr
    import tomllib

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"stackplan": "dbx_ai_infra.__main__:run"}  # where `python -m stackplan` enters
