"""The real `pulumi up` path, as far as it runs without the CLI: config built exactly as the CLI builds it
(``PULUMI_CONFIG`` and ``PULUMI_CONFIG_SECRET_KEYS`` in the environment, every value a string, objects as JSON), the
program run against Pulumi's mock monitor, and the README's deployment steps checked against the repository.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import SHIPPED, make_dry_run

from dbx_ai_infra.engine.engine import ProgramError, run_program
from dbx_ai_infra.stackspec import LoadedStack, load_stack

REPO = Path(__file__).resolve().parent.parent
SECRET_TOKEN = "dapi" + "0123456789abcdef" * 2


def cli_config(stack: str) -> dict[str, str]:
    """The stack file's config as the CLI hands it to a program: ``project:key`` -> string (objects as JSON)."""
    loaded = load_stack(stack)
    return dict(loaded.config)


def run_as_the_cli(stack: str, monkeypatch, extra: dict[str, str] | None = None,
                   secret_keys: list[str] | None = None):
    """Run the program with its config in the environment only, as the language host receives it."""
    config = {**cli_config(stack), **(extra or {})}
    monkeypatch.setenv("PULUMI_CONFIG", json.dumps(config))
    monkeypatch.setenv("PULUMI_CONFIG_SECRET_KEYS", json.dumps(secret_keys or []))
    loaded = load_stack(stack)
    empty = LoadedStack(loaded.name, loaded.path, {}, loaded.resolved)  # nothing set in-process
    return run_program(empty, from_config=True)


@pytest.mark.parametrize("stack", SHIPPED)
def test_the_program_under_cli_config_registers_what_the_offline_engine_does(stack, monkeypatch, plan_of):
    # a provider secret, decrypted by the CLI into the environment, as `pulumi config set --secret` leaves it
    plan = run_as_the_cli(stack, monkeypatch, {"databricks:token": SECRET_TOKEN}, ["databricks:token"])
    offline = plan_of(stack)
    assert [(r.type, r.name, r.inputs) for r in plan.resources] == \
        [(r["type"], r["name"], r["inputs"]) for r in offline["resources"]]
    assert SECRET_TOKEN not in json.dumps(plan.to_json())


def test_a_project_secret_is_refused_before_any_resource(monkeypatch):
    config = json.loads(cli_config("dev")["dbx-ai-infra:dev"])
    config["spark_env_vars"] = {"HF_TOKEN": "hf_plaintext"}
    with pytest.raises(ProgramError) as excinfo:
        run_as_the_cli("dev", monkeypatch, {"dbx-ai-infra:dev": json.dumps(config)}, ["dbx-ai-infra:dev"])
    message = str(excinfo.value)
    assert "dbx-ai-infra:dev: is a Pulumi secret" in message and "{{secrets/<scope>/<key>}}" in message
    assert "hf_plaintext" not in message


def test_an_encrypted_value_in_a_stack_file_is_refused_offline(write_stack, capsys):
    from conftest import BASE_CONFIG

    from dbx_ai_infra.cli.cli import main

    config = dict(BASE_CONFIG)
    config["dbx-ai-infra:dev"] = {**BASE_CONFIG["dbx-ai-infra:dev"], "spark_env_vars": {"HF_TOKEN": {"secure": "AAAB"}}}
    assert main(["check", "--stack", str(write_stack(config))]) == 2
    err = capsys.readouterr().err
    assert "dbx-ai-infra:dev.spark_env_vars.HF_TOKEN: is an encrypted secure: value; the offline engine cannot " \
           "decrypt it" in err


def test_yaml_12_core_semantics_bare_keys_and_numbers_where_strings_belong(write_stack, capsys):
    from dbx_ai_infra.cli.cli import main

    text = """config:
  cloud: aws
  dbx-ai-infra:gpu_family: a10g
  dbx-ai-infra:single_user_name: ml@example.com
  dbx-ai-infra:tags: {workload: genai, cost_center: 1234, env: no}
  dbx-ai-infra:dev:
    spark_env_vars: {DEBUG: true, WORKERS: 4}
"""
    path = write_stack(text=text)
    assert main(["preview", "--stack", str(path), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    (dev,) = [r["inputs"] for r in plan["resources"] if r["type"].endswith("cluster:Cluster")]
    assert dev["customTags"]["env"] == "no" and dev["customTags"]["cost_center"] == "1234"
    assert dev["sparkEnvVars"]["DEBUG"] == "true" and dev["sparkEnvVars"]["WORKERS"] == "4"


def test_shipped_stacks_carry_no_host_so_the_environment_wins():
    for stack in SHIPPED:
        text = (REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text()
        assert "databricks:host" not in text and "databricks:token" not in text


def test_the_readmes_deployment_steps_match_the_repository():
    for page in ("README.md", "docs/deploying.md"):
        _commands_exist(REPO / page)


def _commands_exist(page: Path) -> None:
    text = page.read_text()
    section = text.split("# Deploying with Pulumi", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.split("#", 1)[0].strip()]
    project = (REPO / "Pulumi.yaml").read_text()
    assert "stackConfigDir: stacks" in project and "virtualenv: .venv" in project
    for command in commands:
        if command.startswith("make "):
            assert make_dry_run(*command.split()[1:]), command  # a target the Makefile has
        if command.startswith("pulumi stack select"):
            assert "--create" in command  # a stack that does not exist yet on the backend is created
            assert (REPO / "stacks" / f"Pulumi.{command.split()[-1]}.yaml").is_file()
        if "--policy-pack" in command:
            assert (REPO / command.split("--policy-pack", 1)[1].split()[0] / "PulumiPolicy.yaml").is_file()
    assert any(c.startswith("pulumi up") for c in commands)
    workflow = next((REPO / ".github" / "workflows").glob("*.yml")).read_text()
    assert "pulumi/actions@8e5e406f4007fca908480587cb9893c07090f58d  # v7.0.0" in workflow  # pinned by SHA
    assert "upsert: true" in workflow


def test_pulumi_config_values_are_strings_as_the_cli_gives_them():
    config = cli_config("prod")
    assert all(isinstance(v, str) for v in config.values())
    assert json.loads(config["dbx-ai-infra:training"])["num_workers"] == 2


# --- the first deployment: what each resource waits for (issue 26) -------------------------------------------------

def _creation_order(resources: list[dict]) -> list[dict]:
    """The resources in an order Pulumi may create them: each after every resource it depends on."""
    by_urn = {r["urn"]: r for r in resources}
    done: set[str] = set()
    order: list[dict] = []
    pending = list(resources)
    while pending:
        ready = [r for r in pending if all(d in done or d not in by_urn for d in r["dependencies"])]
        assert ready, "a dependency cycle"
        for r in ready:
            done.add(r["urn"])
            order.append(r)
        pending = [r for r in pending if r["urn"] not in done]
    return order


def _paths_read(inputs: dict) -> set[str]:
    """The /Volumes/... paths a cluster, job or endpoint reads, wherever they appear in its inputs."""
    text = json.dumps(inputs)
    return set(re.findall(r"/Volumes/[A-Za-z0-9_]+/[A-Za-z0-9_]+/[A-Za-z0-9_]+", text))


@pytest.mark.parametrize("stack", SHIPPED)
def test_in_creation_order_every_compute_resource_finds_what_it_reads(stack, plan_of):
    plan = plan_of(stack)
    order = _creation_order(plan["resources"])
    made: set[str] = set()
    volumes = {f"/Volumes/{r['inputs']['catalogName']}/{r['inputs']['schemaName']}/{r['inputs']['name']}": r["urn"]
               for r in plan["resources"] if r["type"] == "databricks:index/volume:Volume"}
    grants = [r for r in plan["resources"] if r["type"] in ("databricks:index/grants:Grants",
                                                            "databricks:index/grant:Grant")]
    files = {r["inputs"]["path"]: r["urn"] for r in plan["resources"] if r["type"] == "databricks:index/file:File"}
    checked = 0
    ids = {r["id"]: r["urn"] for r in plan["resources"] if r.get("id")}
    for r in order:
        # any input that holds another resource's id (a policy pinning its pool, a cluster on its policy) comes after it
        for value in re.findall(r'([A-Za-z0-9_.-]+-id)\b', json.dumps(r["inputs"])):
            if value in ids and ids[value] != r["urn"]:
                assert ids[value] in made, (r["name"], value)
        if r["type"] in ("databricks:index/cluster:Cluster", "databricks:index/job:Job"):
            for path in _paths_read(r["inputs"]):
                volume = volumes[path]
                assert volume in made, (r["name"], path)  # the Volume exists before the cluster starts
                # and the grants that let its identity read it (on the Volume, its schema, the catalog)
                assert all(g["urn"] in made for g in grants), (r["name"], "grants")
                checked += 1
            for script in re.findall(r'"destination": "([^"]+)"', json.dumps(r["inputs"])):
                assert files[script] in made, (r["name"], script)
        if r["type"] == "databricks:index/modelServing:ModelServing":
            table = (r["inputs"].get("aiGateway") or {}).get("inferenceTableConfig") or {}
            if table.get("enabled"):
                schema = [s for s in plan["resources"] if s["type"] == "databricks:index/schema:Schema"
                          and s["inputs"]["name"] == table["schemaName"]]
                assert schema and schema[0]["urn"] in made, r["name"]
        made.add(r["urn"])
    assert checked  # every shipped stack has compute that reads a Volume


@pytest.mark.parametrize("stack", SHIPPED)
def test_the_people_the_stack_names_can_use_its_compute(stack, plan_of):
    """Every cluster's single user may restart it, a job's workload groups may manage its runs, a pool's groups may
    attach to it (the deployer alone would own them otherwise)."""
    plan = plan_of(stack)
    by_urn = {r["urn"]: r for r in plan["resources"]}
    acl: dict[str, list[dict]] = {}
    for r in plan["resources"]:
        if r["type"] == "databricks:index/permissions:Permissions":
            target = next(r["inputs"][k] for k in ("clusterId", "jobId", "instancePoolId", "clusterPolicyId",
                                                   "servingEndpointId") if k in r["inputs"])
            acl[target] = r["inputs"]["accessControls"]
    ids = {r["id"]: r for r in by_urn.values()}
    for r in plan["resources"]:
        if r["type"] == "databricks:index/cluster:Cluster":
            user = r["inputs"]["singleUserName"]  # a person, a service principal, or a group (dedicated_group)
            assert {"permissionLevel": "CAN_RESTART"}.items() <= next(
                a for a in acl[r["id"]] if user in (a.get("userName"), a.get("servicePrincipalName"),
                                                     a.get("groupName"))).items(), r["name"]
        if r["type"] == "databricks:index/job:Job":
            assert any(a["permissionLevel"] == "CAN_MANAGE_RUN" for a in acl[r["id"]]), r["name"]
        if r["type"] == "databricks:index/instancePool:InstancePool" and r["id"] in acl:
            # its groups, and the identity its workload runs as, may create clusters on it (attach, or manage where
            # the permissions section says so)
            assert all(a["permissionLevel"] in ("CAN_ATTACH_TO", "CAN_MANAGE") and (
                a.get("groupName") or a.get("userName") or a.get("servicePrincipalName")) for a in acl[r["id"]])
    assert ids  # the plan has resources


def test_the_new_workspace_stacks_permissions_section_reaches_each_object(plan_of):
    """The `permissions` section adds access on top of what the stack gives, one access control per principal."""
    plan = plan_of("new-workspace")
    acl = {r["name"]: r["inputs"]["accessControls"] for r in plan["resources"]
           if r["type"] == "databricks:index/permissions:Permissions"}
    assert "new-workspace-training-cluster-permissions" not in acl  # training runs on its job: no cluster
    job = acl["new-workspace-training-job-permissions"]
    assert {"groupName": "ml-leads", "permissionLevel": "CAN_VIEW"} in job
    assert {"groupName": "ml-engineers", "permissionLevel": "CAN_MANAGE_RUN"} in job  # the can_use group stays
    assert {"groupName": "ml-platform", "permissionLevel": "CAN_MANAGE"} in acl["new-workspace-training-pool-pool-permissions"]
    # the dev workload asked for nothing more: its cluster keeps only its single user, a person (the job's identity
    # is a service principal, to whom nobody could attach a notebook)
    assert acl["new-workspace-dev-cluster-permissions"] == [{"userName": "ml-lead@example.com",
                                                             "permissionLevel": "CAN_RESTART"}]


def test_a_principal_named_again_in_permissions_takes_that_level(write_stack):
    from conftest import BASE_CONFIG

    from dbx_ai_infra.engine.pipeline import build

    user = BASE_CONFIG["dbx-ai-infra:single_user_name"]
    config = {**BASE_CONFIG, "dbx-ai-infra:permissions": {
        "inference": {"cluster": [{"user_name": user, "permission_level": "CAN_MANAGE"}]}}}
    plan = build(str(write_stack(config))).plan
    (controls,) = [r.inputs["accessControls"] for r in plan.resources
                   if r.type == "databricks:index/permissions:Permissions" and r.name.endswith("inference-cluster-permissions")]
    assert controls == [{"userName": user, "permissionLevel": "CAN_MANAGE"}]


@pytest.mark.parametrize("access, message", [
    ({"training": {"cluster": [{"group_name": "g", "permission_level": "CAN_MANAGE"}]}},
     "permissions.training names no workload of the stack"),
    ({"inference": {"cluster": [{"group_name": "g", "permission_level": "CAN_MANAGE_RUN"}]}},
     "permission_level 'CAN_MANAGE_RUN' is not one a cluster takes; use one of CAN_ATTACH_TO, CAN_RESTART, CAN_MANAGE"),
    ({"inference": {"job": [{"group_name": "g", "permission_level": "CAN_VIEW"}]}},
     "permissions.inference.job is set but inference makes no job"),
    ({"inference": {"pool": [{"group_name": "g", "permission_level": "CAN_MANAGE"}]}},
     "permissions.inference.pool is set but inference has no instance pool"),
    ({"inference": {"cluster": [{"group_name": "g", "user_name": "u@x.com", "permission_level": "CAN_MANAGE"}]}},
     "names group_name and user_name; give exactly one of group_name, user_name, service_principal_name"),
])
def test_a_permissions_entry_the_stack_cannot_apply_is_refused(write_stack, capsys, access, message):
    from conftest import BASE_CONFIG

    from dbx_ai_infra.cli.cli import main

    config = {**BASE_CONFIG, "dbx-ai-infra:permissions": access}
    config.pop("dbx-ai-infra:training", None)
    config.pop("dbx-ai-infra:instance_pools", None)
    assert main(["preview", "--stack", str(write_stack(config))]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
