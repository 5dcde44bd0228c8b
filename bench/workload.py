"""A generated cluster workload for the benchmarks, in three equivalent shapes.

`make_clusters(n)` returns ``n`` Databricks Clusters API cluster dicts (snake_case), deterministic for a given ``n``
and seed: a mix of compliant training, inference and interactive (single-node and CPU) shapes on AWS, Azure and
GCP, with node types taken from ``gpucatalog``, and about a quarter of them breaking exactly one rule each.
Each cluster records what it should break under the private key ``_expect`` (``None`` for a compliant one); the
writers drop that key.

The same clusters can be written as:

* Clusters API JSON (``write_cluster_json``), what ``python -m stackplan audit --cluster-json`` reads;
* a plan with ``databricks:index/cluster:Cluster`` resources in Pulumi's camelCase (``make_plan``), what
  ``dbx_ai_infra.policies.registry.evaluate_plan`` reads;
* Terraform ``databricks_cluster`` resources in HCL (``write_terraform``), what checkov scans.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from dbx_ai_infra.gpucatalog import load_catalog  # noqa: E402

CLOUDS = ("aws", "azure", "gcp")
ATTR_BLOCK = {"aws": "aws_attributes", "azure": "azure_attributes", "gcp": "gcp_attributes"}
ON_DEMAND = {"aws": "ON_DEMAND", "azure": "ON_DEMAND_AZURE", "gcp": "ON_DEMAND_GCP"}
SPOT_WITH_FALLBACK = {"aws": "SPOT_WITH_FALLBACK", "azure": "SPOT_WITH_FALLBACK_AZURE",
                      "gcp": "PREEMPTIBLE_WITH_FALLBACK_GCP"}
#: CPU node types per cloud (recognised by gpucatalog's naming patterns as CPU nodes).
CPU_NODES = {"aws": ("i3.xlarge", "m5d.2xlarge", "r5d.4xlarge"),
             "azure": ("Standard_DS3_v2", "Standard_E8ds_v5", "Standard_D16ds_v5"),
             "gcp": ("n2-highmem-8", "n2-standard-16", "n2-highmem-16")}
GPU_RUNTIME = "15.4.x-gpu-ml-scala2.12"
CPU_ML_RUNTIME = "15.4.x-cpu-ml-scala2.12"
CPU_RUNTIME = "15.4.x-scala2.12"
PIP = ("torch==2.3.1", "transformers==4.41.2", "accelerate==0.31.0", "vllm==0.5.0", "datasets==2.20.0")
TEAMS = ("ai-team", "search", "recsys", "nlp-platform", "vision")

#: What a violating cluster breaks: the kind, and the rule of ours that must report it. Several kinds may share a
#: rule (a GPU runtime on a CPU node and a CPU runtime on a GPU node are one runtime rule).
VIOLATIONS: dict[str, str] = {
    "inference_all_spot": "databricks-cluster-disallow-all-spot-inference",
    "training_autoscaled": "databricks-cluster-disallow-autoscaled-or-spot-training",
    "workers_with_autoscale": "databricks-cluster-configure-worker-bounds",
    "cloud_mismatch": "databricks-cluster-require-matching-cloud-attributes",
    "gpu_runtime_on_cpu": "databricks-cluster-require-matching-runtime",
    "cpu_runtime_on_gpu": "databricks-cluster-require-matching-runtime",
    "node_type_with_pool": "databricks-cluster-disallow-node-type-with-instance-pool",
    "missing_tags": "databricks-resource-require-tags",
    "no_autotermination": "databricks-cluster-require-autotermination",
}
#: The rules the peer comparison covers (checkov has one custom check for each).
PEER_RULES: tuple[str, ...] = tuple(dict.fromkeys(VIOLATIONS.values()))

#: Share of clusters that break one rule.
VIOLATING_SHARE = 0.25


def _gpu_nodes() -> dict[str, list[Any]]:
    cat = load_catalog()
    return {cloud: [n for n in cat if n.cloud == cloud and not n.retired] for cloud in CLOUDS}


def _tags(rng: random.Random, role: str, i: int) -> dict[str, str]:
    return {"workload": rng.choice(("genai", "llm-serving", "embeddings", "fine-tuning")),
            "cost_center": rng.choice(TEAMS), "env": rng.choice(("dev", "staging", "prod")),
            "workload_type": role, "owner": f"team-{i % 17}"}


def _attrs(cloud: str, availability: str, first_on_demand: int | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"availability": availability}
    if first_on_demand is not None:
        block["first_on_demand"] = first_on_demand
    if cloud == "aws":
        block["zone_id"] = "auto"
    return block


def _libraries(rng: random.Random) -> list[dict[str, Any]]:
    return [{"pypi": {"package": p}} for p in rng.sample(PIP, rng.randint(1, 3))]


def _training(rng, i, cloud, gpus) -> dict[str, Any]:
    node = rng.choice([n for n in gpus[cloud] if n.gpu_count >= 4] or gpus[cloud])
    avail = rng.choice((ON_DEMAND[cloud], SPOT_WITH_FALLBACK[cloud]))
    return {
        "cluster_name": f"bench-{i:05d}-train-{cloud}", "spark_version": GPU_RUNTIME, "node_type_id": node.node_type_id,
        "driver_node_type_id": node.node_type_id, "num_workers": rng.choice((2, 4, 8, 16)),
        "autotermination_minutes": rng.choice((30, 60, 120)), ATTR_BLOCK[cloud]: _attrs(cloud, avail, 1),
        "custom_tags": _tags(rng, "training", i),
        "spark_env_vars": {"CHECKPOINT_DIR": f"/Volumes/ai/models/checkpoints/run-{i}",
                           "HF_HOME": "/Volumes/ai/models/hf_cache"},
        "spark_conf": {"spark.task.resource.gpu.amount": "1"},
        "libraries": _libraries(rng), "data_security_mode": "SINGLE_USER", "single_user_name": "ml@example.com",
    }


def _inference(rng, i, cloud, gpus) -> dict[str, Any]:
    node = rng.choice(gpus[cloud])
    low = rng.randint(1, 4)
    high = low + rng.randint(1, 8)
    if rng.random() < 0.3:
        attrs = _attrs(cloud, ON_DEMAND[cloud])
    else:
        attrs = _attrs(cloud, SPOT_WITH_FALLBACK[cloud], low + 1 + rng.randint(0, 1))
    tags = _tags(rng, "inference", i)
    tags["gpu_memory_need_gb"] = str(int(node.total_gpu_memory_gb * 0.7))
    return {
        "cluster_name": f"bench-{i:05d}-infer-{cloud}", "spark_version": GPU_RUNTIME, "node_type_id": node.node_type_id,
        "autoscale": {"min_workers": low, "max_workers": high}, "autotermination_minutes": rng.choice((10, 30, 60)),
        ATTR_BLOCK[cloud]: attrs, "custom_tags": tags,
        "spark_env_vars": {"HF_HOME": "/Volumes/ai/models/hf_cache"}, "libraries": _libraries(rng),
        "data_security_mode": "USER_ISOLATION",
    }


def _single_node(rng, i, cloud, gpus) -> dict[str, Any]:
    node = rng.choice([n for n in gpus[cloud] if n.gpu_count == 1] or gpus[cloud])
    tags = {**_tags(rng, "interactive", i), "ResourceClass": "SingleNode"}
    return {
        "cluster_name": f"bench-{i:05d}-dev-{cloud}", "spark_version": GPU_RUNTIME, "node_type_id": node.node_type_id,
        "driver_node_type_id": node.node_type_id, "num_workers": 0,
        "autotermination_minutes": rng.choice((20, 30, 45)), ATTR_BLOCK[cloud]: _attrs(cloud, ON_DEMAND[cloud], 1),
        "custom_tags": tags,
        "spark_conf": {"spark.databricks.cluster.profile": "singleNode", "spark.master": "local[*, 4]"},
        "data_security_mode": "SINGLE_USER", "single_user_name": f"user{i % 50}@example.com",
    }


def _cpu_interactive(rng, i, cloud, gpus) -> dict[str, Any]:
    node = rng.choice(CPU_NODES[cloud])
    return {
        "cluster_name": f"bench-{i:05d}-etl-{cloud}", "spark_version": rng.choice((CPU_RUNTIME, CPU_ML_RUNTIME)),
        "node_type_id": node, "num_workers": rng.randint(1, 8), "autotermination_minutes": rng.choice((30, 60, 90)),
        ATTR_BLOCK[cloud]: _attrs(cloud, SPOT_WITH_FALLBACK[cloud], 1), "custom_tags": _tags(rng, "interactive", i),
        "data_security_mode": "USER_ISOLATION",
    }


_SHAPES = ((_training, 3), (_inference, 4), (_single_node, 2), (_cpu_interactive, 1))


def _break(kind: str, c: dict[str, Any], rng: random.Random, i: int, cloud: str, gpus) -> dict[str, Any]:
    """Turn a compliant cluster into one that breaks exactly one rule (``kind``)."""
    if kind == "inference_all_spot":
        c = _inference(rng, i, cloud, gpus)
        c[ATTR_BLOCK[cloud]] = _attrs(cloud, SPOT_WITH_FALLBACK[cloud], c["autoscale"]["min_workers"])
    elif kind == "training_autoscaled":
        c = _training(rng, i, cloud, gpus)
        del c["num_workers"]
        c["autoscale"] = {"min_workers": 2, "max_workers": 8}
    elif kind == "workers_with_autoscale":
        c = _inference(rng, i, cloud, gpus)
        c["num_workers"] = c["autoscale"]["min_workers"]
    elif kind == "cloud_mismatch":
        c = _single_node(rng, i, cloud, gpus)
        other = CLOUDS[(CLOUDS.index(cloud) + 1) % 3]
        del c[ATTR_BLOCK[cloud]]
        c[ATTR_BLOCK[other]] = _attrs(other, ON_DEMAND[other], 1)
    elif kind == "gpu_runtime_on_cpu":
        c = _cpu_interactive(rng, i, cloud, gpus)
        c["spark_version"] = GPU_RUNTIME
    elif kind == "cpu_runtime_on_gpu":
        c = _training(rng, i, cloud, gpus)
        c["spark_version"] = CPU_RUNTIME
    elif kind == "node_type_with_pool":
        c = _training(rng, i, cloud, gpus)
        del c[ATTR_BLOCK[cloud]]
        del c["driver_node_type_id"]
        c["instance_pool_id"] = f"pool-{cloud}-{i % 7:02d}"
        c["driver_instance_pool_id"] = c["instance_pool_id"]
    elif kind == "missing_tags":
        c = dict(c)
        c["custom_tags"] = {k: v for k, v in c["custom_tags"].items() if k != "cost_center"}
    elif kind == "no_autotermination":
        # an inference cluster may stay up (issue 17: its base serves around the clock), so plant it on training
        c = _training(rng, i, cloud, gpus) if "autoscale" in c else dict(c)
        c["autotermination_minutes"] = 0
    else:  # pragma: no cover - a typo in VIOLATIONS
        raise ValueError(kind)
    c["cluster_name"] = f"bench-{i:05d}-bad-{kind.replace('_', '-')}-{cloud}"
    return c


def make_clusters(n: int, seed: int = 20261202) -> list[dict[str, Any]]:
    """``n`` cluster dicts (Clusters API shape), each with ``_expect``: the violation kind, or ``None``."""
    rng = random.Random(seed)
    gpus = _gpu_nodes()
    kinds = list(VIOLATIONS)
    shapes = [f for f, weight in _SHAPES for _ in range(weight)]
    every = round(1 / VIOLATING_SHARE)
    out = []
    for i in range(n):
        cloud = CLOUDS[i % 3]
        c = rng.choice(shapes)(rng, i, cloud, gpus)
        kind = None
        if i % every == every - 1:
            kind = kinds[(i // every) % len(kinds)]
            c = _break(kind, c, rng, i, cloud, gpus)
        c["cluster_id"] = f"{1000 + i:04d}-{i * 7919 % 1000000:06d}-bench{i % 97:02d}"
        c["_expect"] = kind
        out.append(c)
    return out


def public(cluster: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in cluster.items() if not k.startswith("_")}


def expected_pairs(clusters: Iterable[dict[str, Any]]) -> set[tuple[str, str]]:
    """``{(cluster_name, rule of ours)}`` that a correct evaluation must report."""
    return {(c["cluster_name"], VIOLATIONS[c["_expect"]]) for c in clusters if c["_expect"]}


def write_cluster_json(clusters: list[dict[str, Any]], path: Path) -> Path:
    """The clusters as a clusters/list response: ``{"clusters": [...]}``."""
    path.write_text(json.dumps({"clusters": [public(c) for c in clusters]}), encoding="utf-8")
    return path


# --- Pulumi camelCase plan ------------------------------------------------------------------------------------------

_MAP_VALUED = frozenset({"custom_tags", "spark_conf", "spark_env_vars"})


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_camel(value: Any, convert: bool = True) -> Any:
    if isinstance(value, dict):
        return {(_camel(k) if convert else k): to_camel(v, convert and k not in _MAP_VALUED) for k, v in value.items()}
    if isinstance(value, list):
        return [to_camel(v, convert) for v in value]
    return value


def make_plan(clusters: list[dict[str, Any]]) -> dict[str, Any]:
    """A plan (see docs/ARCHITECTURE.md) whose resources are the clusters as Pulumi Cluster resources."""
    t = "databricks:index/cluster:Cluster"
    resources = []
    for c in clusters:
        name = c["cluster_name"]
        inputs = to_camel({k: v for k, v in public(c).items() if k != "cluster_id"})
        resources.append({"urn": f"urn:pulumi:bench::dbx-ai-infra::{t}::{name}", "id": f"{name}-id", "type": t,
                          "name": name,
                          "parent": "urn:pulumi:bench::dbx-ai-infra::pulumi:pulumi:Stack::dbx-ai-infra-bench",
                          "inputs": inputs})
    return {"stack": "bench", "project": "dbx-ai-infra", "stack_file": "(generated)", "cloud": "mixed",
            "resources": resources, "outputs": {}}


# --- Terraform (HCL) ------------------------------------------------------------------------------------------------

def tf_name(index: int) -> str:
    return f"c{index:05d}"


def _hcl_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return json.dumps(str(v))


def _hcl_map(name: str, mapping: dict[str, Any], pad: str) -> list[str]:
    lines = [f"{pad}{name} = {{"]
    lines += [f"{pad}  {json.dumps(k)} = {_hcl_value(v)}" for k, v in mapping.items()]
    return lines + [f"{pad}}}"]


def cluster_hcl(index: int, cluster: dict[str, Any]) -> str:
    """One ``resource "databricks_cluster"`` block with the same settings as the Clusters API dict."""
    lines = [f'resource "databricks_cluster" "{tf_name(index)}" {{']
    for key, value in public(cluster).items():
        if key == "cluster_id":
            continue  # computed by the provider
        if key in _MAP_VALUED:
            lines += _hcl_map(key, value, "  ")
        elif key == "libraries":
            for lib in value:
                lines += ["  library {", "    pypi {", f"      package = {_hcl_value(lib['pypi']['package'])}",
                          "    }", "  }"]
        elif isinstance(value, dict):  # nested blocks: autoscale, aws_attributes, ...
            lines.append(f"  {key} {{")
            lines += [f"    {k} = {_hcl_value(v)}" for k, v in value.items()]
            lines.append("  }")
        else:
            lines.append(f"  {key} = {_hcl_value(value)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_terraform(clusters: list[dict[str, Any]], folder: Path, per_file: int = 500) -> Path:
    """The clusters as ``databricks_cluster`` resources in ``folder/clusters_NNN.tf`` (``per_file`` a file), with a
    provider block in ``main.tf``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "main.tf").write_text(
        'terraform {\n  required_providers {\n    databricks = {\n      source  = "databricks/databricks"\n'
        '      version = "1.58.0"\n    }\n  }\n}\n\nprovider "databricks" {}\n', encoding="utf-8")
    for start in range(0, len(clusters), per_file):
        chunk = clusters[start:start + per_file]
        text = "\n".join(cluster_hcl(start + j, c) for j, c in enumerate(chunk))
        (folder / f"clusters_{start // per_file:03d}.tf").write_text(text, encoding="utf-8")
    return folder


#: Our rule -> the custom checkov check (bench/checkov_checks/) that does the same job.
CHECKOV_IDS: dict[str, str] = {
    "databricks-cluster-disallow-all-spot-inference": "CKV_DBXB_1",
    "databricks-cluster-disallow-autoscaled-or-spot-training": "CKV_DBXB_2",
    "databricks-cluster-configure-worker-bounds": "CKV_DBXB_3",
    "databricks-cluster-require-matching-cloud-attributes": "CKV_DBXB_4",
    "databricks-cluster-require-matching-runtime": "CKV_DBXB_5",
    "databricks-cluster-disallow-node-type-with-instance-pool": "CKV_DBXB_6",
    "databricks-resource-require-tags": "CKV_DBXB_7",
    "databricks-cluster-require-autotermination": "CKV_DBXB_8",
}
assert set(CHECKOV_IDS) == set(PEER_RULES)


def node_type_table(clusters: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """What gpucatalog says of every node type the clusters use (and of the whole catalog): its cloud, GPU or CPU.
    checkov's checks read this, so both engines decide with the same facts."""
    cat = load_catalog()
    ids = {n.node_type_id for n in cat}
    for c in clusters:
        ids.update(v for k, v in c.items() if k in ("node_type_id", "driver_node_type_id") and isinstance(v, str))
    table: dict[str, Any] = {"cloud": {}, "gpu": [], "cpu": []}
    for node in sorted(ids):
        cloud = cat.cloud_of(node)
        if cloud:
            table["cloud"][node] = cloud
        gpu = cat.is_gpu_node(node)
        if gpu is True:
            table["gpu"].append(node)
        elif gpu is False:
            table["cpu"].append(node)
    return table


def write_workspace_export(n_clusters: int, n_jobs: int, path: Path) -> Path:
    """A mixed workspace export: ``n_clusters`` clusters (clusters/list) and ``n_jobs`` jobs (jobs/list), each job
    running one generated cluster definition as its job cluster and a task on it."""
    clusters = [public(c) for c in make_clusters(n_clusters)]
    job_specs = [public(c) for c in make_clusters(n_jobs, seed=20261203)]
    jobs = []
    for i, spec in enumerate(job_specs):
        spec = {k: v for k, v in spec.items() if k not in ("cluster_id", "cluster_name", "autotermination_minutes")}
        jobs.append({"job_id": 100_000 + i, "settings": {
            "name": f"bench-job-{i:05d}", "tags": {"workload": "bench", "cost_center": "bench"},
            "job_clusters": [{"job_cluster_key": "main", "new_cluster": spec}],
            "tasks": [{"task_key": "run", "job_cluster_key": "main",
                       "spark_python_task": {"python_file": "/Workspace/run.py"}}]}})
    path.write_text(json.dumps({"clusters": clusters, "jobs": jobs}), encoding="utf-8")
    return path
