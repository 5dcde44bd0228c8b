"""Generate the VM price data of the cost model from public price lists: ``dbx_ai_infra/pricing/vm_prices.json``
(on-demand and spot $/h per cloud, region and node type, for the GPU node types of the catalog and the common CPU
families) and ``dbx_ai_infra/gpucatalog/cpu_node_types.json`` (the CPU node types: vCPUs, memory and DBU/h as Databricks
lists them, and the reference region's on-demand price).

The sources are read from files on disk (fetch their repositories first; nothing fetched is committed), each named
with the commit it was read at::

    python -m dbx_ai_infra.pricing.tools.gen_vm_prices \\
        --cyclenerd PATH/pricing.yml@fd66b26 \\
        --karpenter-aws PATH/zz_generated.pricing_aws.go@1d927085 \\
        --karpenter-azure PATH/zz_generated.pricing.go@352646f5 \\
        --aws-gpu-regions PATH/all_gpu_instances.js@7412fd25 \\
        --aws-cpu-regions PATH/data/ec2@74c9fd8ab \\
        --spot-advisor PATH/spot-advisor-data.json@05e93313:2025-07-28 \\
        --dbu-rates PATH/instance-dbu-rates.csv@0027af58:2026-04-10 \\
        [--lakemeter PATH/vm-costs.csv@COMMIT ...]

Every source's date is its own (the generated-at stamp a file carries, else the date given after the commit). What a
source does not price is left out, never filled from another region: the cost model names such a node unpriced.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[3]
VM_OUT = REPO / "dbx_ai_infra" / "pricing" / "vm_prices.json"
CPU_OUT = REPO / "dbx_ai_infra" / "gpucatalog" / "cpu_node_types.json"
GPU_CATALOG = REPO / "dbx_ai_infra" / "gpucatalog" / "node_types.yaml"

#: The common CPU families priced per region, as Databricks lists their sizes (instance-dbu-rates.csv): general
#: purpose, memory and compute optimized, local-SSD. ``.metal`` sizes are left out (no Databricks node type).
CPU_FAMILIES = {
    "aws": re.compile(r"^(m5|m5d|m6i|m6id|r5|r5d|r6i|i3|i4i|c5|c5d|c6i)\.(?!metal)[0-9a-z]+$"),
    "azure": re.compile(r"^Standard_(D\d+s_v3|D\d+ds_v4|D\d+s_v5|D\d+ds_v5|D\d+as_v5|DS\d+_v2|E\d+s_v3|E\d+ds_v4|"
                        r"E\d+s_v5|E\d+ds_v5|E\d+as_v5|F\d+s_v2|L\d+s_v2|L\d+s_v3)$"),
    "gcp": re.compile(r"^(n1-standard|n1-highmem|n2-standard|n2-highmem|n2-highcpu|n2d-standard|n2d-highmem|"
                      r"c2-standard)-\d+$"),
}
#: The CPU node type a GPU cluster's driver defaults to (`<workload>.driver: cpu`): the first of its cloud.
DRIVER_DEFAULT = {"aws": "m5.2xlarge", "azure": "Standard_D8s_v3", "gcp": "n2-standard-8"}
REFERENCE = {"aws": "us-east-1", "azure": "eastus", "gcp": "us-central1"}
#: A GCP GPU machine whose listed spot price is under this share of its on-demand price lacks the GPU's spot SKU in
#: that region (Cyclenerd's spot figure is then the machine's CPU and memory alone: g2-standard-8 africa-south1
#: 0.111 against 1.117 on demand, us-central1 0.480 against 0.854; GPU spot discounts run 43-67% where both are
#: listed): its spot price is left unknown, and the cost model names the basis it uses instead.
GCP_GPU_SPOT_FLOOR = 0.3


class SourceError(Exception):
    """A source file that cannot be read as the script expects: the message names it and what was wrong."""


@dataclass(frozen=True)
class Source:
    key: str
    path: Path
    commit: str
    date: str | None = None


@dataclass
class Block:
    """One cloud and region's rows: ``{node_type_id: [on_demand, spot | None]}``."""

    source: str
    date: str
    spot: str | None = None
    spot_source: str | None = None
    spot_date: str | None = None
    nodes: dict[str, list[float | None]] = field(default_factory=dict)
    #: Further blocks of the same region from other sources, each pricing node types this one does not.
    more: list[Block] = field(default_factory=list)


def parse_source(key: str, text: str, *, directory: bool = False) -> Source:
    """``PATH@COMMIT[:DATE]`` as a `Source` (PATH a directory of files where ``directory``)."""
    match = re.fullmatch(r"(.+)@([0-9a-f]{7,40})(?::(\d{4}-\d{2}-\d{2}))?", text)
    if not match:
        raise SourceError(f"--{key.replace('_', '-')} {text!r}: give PATH@COMMIT (and :YYYY-MM-DD for a file that "
                          "carries no date of its own)")
    path = Path(match.group(1))
    if not (path.is_dir() if directory else path.is_file()):
        raise SourceError(f"--{key.replace('_', '-')}: {path} is not a {'directory' if directory else 'file'}")
    return Source(key, path, match.group(2)[:9], match.group(3))


# --------------------------------------------------------------------------------------------------------------------
# readers: one per source format
# --------------------------------------------------------------------------------------------------------------------

def read_cyclenerd(src: Source, wanted: set[str]) -> tuple[str, dict[str, dict[str, tuple[float, float | None]]]]:
    """Cyclenerd's pricing.yml: ``{region: {machine: (on_demand, spot)}}`` for the ``wanted`` machine types. A GPU
    machine's figure includes its GPUs (``hour``: a2/a3/g2 machines are priced whole)."""
    data = yaml.load(src.path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    try:
        generated = datetime.strptime(str(data["about"]["generated"]), "%a %b %d %H:%M:%S %Y").date().isoformat()
        instances = data["compute"]["instance"]
    except (KeyError, TypeError, ValueError) as exc:
        raise SourceError(f"{src.path}: not Cyclenerd's pricing.yml (about.generated, compute.instance): "
                          f"{exc}") from None
    out: dict[str, dict[str, tuple[float, float | None]]] = {}
    for machine in sorted(wanted & set(instances)):
        entry = instances[machine]
        has_gpu = any(k not in ("cost", "cpu", "ram") for k in entry)
        for region, cost in (entry.get("cost") or {}).items():
            hour, spot = cost.get("hour"), cost.get("hour_spot")
            if not isinstance(hour, (int, float)) or hour <= 0:
                continue
            if not isinstance(spot, (int, float)) or spot <= 0 or spot > hour or \
                    (has_gpu and spot / hour < GCP_GPU_SPOT_FLOOR):
                spot = None
            out.setdefault(region, {})[machine] = (round(float(hour), 6), None if spot is None else round(spot, 6))
    return generated, out


_GO_STAMP = re.compile(r"generated at (\d{4}-\d{2}-\d{2})T")
_GO_PRICE = re.compile(r'"([A-Za-z0-9_.\-]+)":\s*([0-9.]+)')


def read_karpenter(src: Source, region_start: re.Pattern[str]) -> tuple[str, dict[str, dict[str, float]]]:
    """A Karpenter provider's generated price file (AWS or Azure): ``{region: {node type: on-demand $/h}}``."""
    text = src.path.read_text(encoding="utf-8")
    stamp = _GO_STAMP.search(text)
    if stamp is None:
        raise SourceError(f"{src.path}: no 'generated at' stamp: not a Karpenter generated price file")
    out: dict[str, dict[str, float]] = {}
    region = None
    for line in text.splitlines():
        start = region_start.search(line)
        if start:
            region = start.group(1)
            continue
        if region is None:
            continue
        for name, price in _GO_PRICE.findall(line):
            if float(price) > 0:
                out.setdefault(region, {})[name] = float(price)
    if not out:
        raise SourceError(f"{src.path}: no prices found")
    return stamp.group(1), out


AWS_REGION_START = re.compile(r'^\s*"([a-z]{2}(?:-gov)?-[a-z]+-\d)": \{')
AZURE_REGION_START = re.compile(r'initialOnDemandPrices\["([a-z0-9]+)"\] = map')


def read_spot_advisor(src: Source) -> dict[str, dict[str, int]]:
    """The AWS Spot Instance Advisor's data (as spotinfo embeds it): ``{region: {instance type: savings %}}`` over
    the on-demand price, Linux."""
    data = json.loads(src.path.read_text(encoding="utf-8"))
    try:
        return {region: {t: int(v["s"]) for t, v in oses.get("Linux", {}).items()}
                for region, oses in data["spot_advisor"].items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise SourceError(f"{src.path}: not the Spot Instance Advisor's data (spot_advisor.<region>.Linux): "
                          f"{exc}") from None


_JS_UPDATED = re.compile(r"^// Last updated: (\d{4}-\d{2}-\d{2})$", re.M)
#: A region's name; a Local Zone's or a Wavelength Zone's (``us-east-1-bos-1``, ``eu-west-3-wl1-cmn1``) is no region.
AWS_REGION = re.compile(r"[a-z]{2}(?:-gov)?-[a-z]+-\d")


def read_aws_gpu_regions(src: Source) -> tuple[str, dict[str, dict[str, float]]]:
    """tsaol/aws-gpu's ``data/all_gpu_instances.js`` (generated from instances.vantage.sh's data, itself from the AWS
    Price List): ``{region: {instance type: on-demand Linux $/h}}`` for the GPU instance types, regions only."""
    text = src.path.read_text(encoding="utf-8")
    stamp = _JS_UPDATED.search(text)
    try:
        if stamp is None:
            raise ValueError("no '// Last updated: YYYY-MM-DD' line")
        rows = json.loads(text[text.index("["):text.rindex("]") + 1])
        out: dict[str, dict[str, float]] = {}
        for row in rows:
            name = row.get("apiName") or row["name"]
            for region, price in (row.get("pricing") or {}).items():
                od = price.get("onDemand")
                if AWS_REGION.fullmatch(region) and isinstance(od, (int, float)) and od > 0:
                    out.setdefault(region, {})[name] = round(float(od), 6)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SourceError(f"{src.path}: not tsaol/aws-gpu's all_gpu_instances.js (a dated list of instances with "
                          f"pricing.<region>.onDemand): {exc}") from None
    if not out:
        raise SourceError(f"{src.path}: no prices found")
    return stamp.group(1), out


_EC2SHOP_FILE = re.compile(r"([a-z]{2}(?:-gov)?-[a-z]+-\d)-ondemand\.json")


def read_ec2shop(src: Source) -> dict[str, tuple[str, dict[str, float]]]:
    """yeo/ec2.shop's ``data/ec2`` directory (the AWS pricing page's per-region on-demand Linux lists, one
    ``<region>-ondemand.json`` each): ``{region: (published, {instance type: $/h})}``, the date from each file's
    manifest (``hawkFilePublicationDate``). A Local or Wavelength Zone's file (``af-south-1-los-1-...``) is no
    region's."""
    out: dict[str, tuple[str, dict[str, float]]] = {}
    for path in sorted(src.path.iterdir()):
        match = _EC2SHOP_FILE.fullmatch(path.name)
        if match:
            out[match.group(1)] = _read_ec2shop_region(path)
    if not out:
        raise SourceError(f"{src.path}: no <region>-ondemand.json files (yeo/ec2.shop's data/ec2)")
    return out


def _read_ec2shop_region(path: Path) -> tuple[str, dict[str, float]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        published = str(data["manifest"]["hawkFilePublicationDate"])[:10]
        datetime.strptime(published, "%Y-%m-%d")
        prices = {str(e["Instance Type"]): round(float(e["price"]), 6)
                  for location in data["regions"].values() for e in location.values()
                  if e.get("Operating System", "Linux") == "Linux"}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SourceError(f"{path}: not an AWS pricing page list as ec2.shop keeps it (manifest."
                          "hawkFilePublicationDate, regions.<location>.<sku>.{Instance Type, price}): "
                          f"{exc}") from None
    return published, {n: p for n, p in prices.items() if p > 0}


def read_lakemeter(src: Source) -> tuple[dict[tuple[str, str], dict[str, list[float | None]]], dict[str, str]]:
    """lakemeter-oss vm-costs CSV (or a part of it): ``{(cloud, region): {type: [on_demand, spot]}}`` and the day
    each cloud's rows were fetched."""
    rows: dict[tuple[str, str], dict[str, list[float | None]]] = {}
    dates: dict[str, str] = {}
    with src.path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            tier = row.get("pricing_tier")
            if tier not in ("on_demand", "spot") or row.get("currency") != "USD":
                continue
            cloud = row["cloud"].lower()
            slot = rows.setdefault((cloud, row["region"]), {}).setdefault(row["instance_type"], [None, None])
            slot[0 if tier == "on_demand" else 1] = float(row["cost_per_hour"])
            dates[cloud] = max(dates.get(cloud, ""), row["fetched_at"][:10])
    return rows, dates


def read_dbu_rates(src: Source) -> dict[str, dict[str, dict[str, float]]]:
    """lakemeter-oss instance-dbu-rates.csv: ``{cloud: {type: {vcpus, memory_gb, dbu_per_hour}}}``."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    with src.path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row.get("is_active", "True") != "True":
                continue
            out.setdefault(row["cloud"].lower(), {})[row["instance_type"]] = {
                "vcpus": float(row["vcpus"]), "memory_gb": float(row["memory_gb"]),
                "dbu_per_hour": float(row["dbu_rate"])}
    return out


# --------------------------------------------------------------------------------------------------------------------
# assembling the data
# --------------------------------------------------------------------------------------------------------------------

def gpu_types() -> dict[str, set[str]]:
    data = yaml.safe_load(GPU_CATALOG.read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {"aws": set(), "azure": set(), "gcp": set()}
    for node in data["node_types"]:
        out[node["cloud"]].add(node["node_type_id"])
    return out


def cpu_types(dbu: dict[str, dict[str, dict[str, float]]]) -> dict[str, list[str]]:
    """The CPU node types of the common families Databricks lists, the driver default first."""
    out = {}
    for cloud, pattern in CPU_FAMILIES.items():
        names = sorted(n for n in dbu.get(cloud, {}) if pattern.match(n))
        first = DRIVER_DEFAULT[cloud]
        if first not in names:
            raise SourceError(f"the DBU rates list no {first} for {cloud}: the driver default must be listed")
        out[cloud] = [first, *(n for n in names if n != first)]
    return out


@dataclass
class Gathered:
    """What the readers have gathered so far: the rows per cloud and region, the source descriptions, and every
    region name a source knows."""

    wanted: dict[str, set[str]]
    cpus: dict[str, list[str]]
    srcs: dict[str, Source]
    advisor: dict[str, dict[str, int]] = field(default_factory=dict)
    blocks: dict[str, dict[str, Block]] = field(default_factory=lambda: {"aws": {}, "azure": {}, "gcp": {}})
    descriptions: dict[str, str] = field(default_factory=dict)
    known: dict[str, set[str]] = field(default_factory=lambda: {"aws": set(), "azure": set(), "gcp": set()})


#: The sources every run reads, and those of them whose file carries no date of its own (given after the commit).
REQUIRED = ("cyclenerd", "karpenter_aws", "karpenter_azure", "spot_advisor", "dbu_rates")
DATED_BY_HAND = ("spot_advisor", "dbu_rates")


def build(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """Read every source and assemble ``(vm_prices, cpu_catalog)``: each step below adds one source's rows, in
    order (a later step fills only what an earlier, newer one leaves out, except lakemeter's rows, which win)."""
    srcs = {key: parse_source(key, getattr(args, key)) for key in REQUIRED}
    for key in DATED_BY_HAND:
        if srcs[key].date is None:
            raise SourceError(f"--{key.replace('_', '-')}: the file carries no date: give PATH@COMMIT:YYYY-MM-DD")
    dbu = read_dbu_rates(srcs["dbu_rates"])
    cpus = cpu_types(dbu)
    gpus = gpu_types()
    got = Gathered({c: gpus[c] | set(cpus[c]) for c in gpus}, cpus, srcs)
    for step in STEPS:
        step(got, args)
    vm = {"sources": got.descriptions,
          "regions": {c: sorted(got.known[c]) for c in got.known},
          "clouds": {c: {r: _block(b) for r, b in sorted(got.blocks[c].items())} for c in got.blocks}}
    return vm, cpu_catalog(cpus, dbu, got.blocks, srcs["dbu_rates"], got.descriptions)


def _gcp_regions(got: Gathered, args: argparse.Namespace) -> None:
    src = got.srcs["cyclenerd"]
    date, gcp = read_cyclenerd(src, got.wanted["gcp"])
    got.descriptions["cyclenerd_gcp_regions"] = (
        f"Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml (commit {src.commit}, generated "
        f"{date} from the Cloud Billing Catalog API): on-demand (hour) and spot (hour_spot) $/h per region; a GPU "
        "machine's price includes its GPUs.")
    for region, machines in gcp.items():
        block = got.blocks["gcp"][region] = Block("cyclenerd_gcp_regions", date, "list price",
                                                  "cyclenerd_gcp_regions", date)
        block.nodes = {n: [od, sp] for n, (od, sp) in sorted(machines.items())}
    got.known["gcp"] |= set(gcp)


def _azure_regions(got: Gathered, args: argparse.Namespace) -> None:
    src = got.srcs["karpenter_azure"]
    date, azure = read_karpenter(src, AZURE_REGION_START)
    got.descriptions["karpenter_azure_regions"] = (
        f"Azure/karpenter-provider-azure pkg/providers/pricing/zz_generated.pricing.go (commit "
        f"{src.commit}, generated {date}): Azure Retail Prices, Linux pay-as-you-go $/h per "
        "region; no spot prices.")
    for region, prices in azure.items():
        listed: dict[str, list[float | None]] = {n: [prices[n], None]
                                                 for n in sorted(got.wanted["azure"] & set(prices))}
        if listed:
            got.blocks["azure"][region] = Block("karpenter_azure_regions", date, nodes=listed)
    got.known["azure"] |= set(azure)


def _aws_us_east_1(got: Gathered, args: argparse.Namespace) -> None:
    src, advisor_src = got.srcs["karpenter_aws"], got.srcs["spot_advisor"]
    date, aws = read_karpenter(src, AWS_REGION_START)
    got.advisor = read_spot_advisor(advisor_src)
    got.descriptions["karpenter_aws_regions"] = (
        f"aws/karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_aws.go (commit "
        f"{src.commit}, generated {date}): AWS Pricing API on-demand Linux $/h ({', '.join(aws)}).")
    got.descriptions["aws_spot_advisor"] = (
        f"AWS Spot Instance Advisor data as alexei-led/spotinfo embeds it (internal/spot/data/spot-advisor-data.json, "
        f"commit {advisor_src.commit}, {advisor_src.date}): savings over on demand per region and "
        "instance type, Linux, a whole percent; spot = on demand x (1 - savings).")
    for region, prices in aws.items():
        rows_aws = _with_spot(prices, got.wanted["aws"], got.advisor.get(region, {}))
        if rows_aws:
            got.blocks["aws"][region] = Block("karpenter_aws_regions", date, "Spot Instance Advisor savings",
                                              "aws_spot_advisor", advisor_src.date, rows_aws)
    got.known["aws"] |= set(aws) | set(got.advisor)


def _with_spot(prices: dict[str, float], wanted: set[str], saving: dict[str, int]) -> dict[str, list[float | None]]:
    """``{type: [on demand, spot]}``, spot = on demand x (1 - the advisor's saving). A saving of 0 or less (the advisor
    has p5.48xlarge in ca-central-1 at -62%: spot above on demand) is no spot price: left unknown."""
    return {n: [prices[n], round(prices[n] * (1 - saving[n] / 100), 6) if saving.get(n, 0) > 0 else None]
            for n in sorted(wanted & set(prices))}


def _aws_gpu_regions(got: Gathered, args: argparse.Namespace) -> None:
    """The AWS GPU types' on-demand prices in the regions Karpenter's list (us-east-1) does not cover; spot from the
    Spot Instance Advisor's savings of that region and type, as for us-east-1."""
    if not args.aws_gpu_regions:
        return
    src = parse_source("aws_gpu_regions", args.aws_gpu_regions)
    date, regions = read_aws_gpu_regions(src)
    got.descriptions["aws_gpu_regions"] = (
        f"tsaol/aws-gpu data/all_gpu_instances.js (commit {src.commit}, last updated {date}), generated from "
        "instances.vantage.sh's data (ec2instances.info, from the AWS Price List): on-demand Linux $/h per region "
        "for the GPU instance types; Local and Wavelength Zones left out.")
    for region, prices in regions.items():
        if region in got.blocks["aws"]:
            continue  # the newer list of the region wins (Karpenter's us-east-1: the same figures, 2026-07-20)
        rows = _with_spot(prices, got.wanted["aws"], got.advisor.get(region, {}))
        if rows:
            got.blocks["aws"][region] = Block("aws_gpu_regions", date, "Spot Instance Advisor savings",
                                              "aws_spot_advisor", got.srcs["spot_advisor"].date, rows)
    got.known["aws"] |= set(regions)


def _aws_cpu_regions(got: Gathered, args: argparse.Namespace) -> None:
    """The AWS CPU families' on-demand prices per region from the AWS pricing page's per-region lists (as
    yeo/ec2.shop keeps them), where no newer list of the region prices the type; spot from the Spot Instance
    Advisor's savings of that region and type. Only the CPU families: the GPU types keep the newer lists (AWS cut its
    P4 and P5 prices in June 2025, after these lists were published)."""
    if not args.aws_cpu_regions:
        return
    src = parse_source("aws_cpu_regions", args.aws_cpu_regions, directory=True)
    regions = read_ec2shop(src)
    dates = sorted({d for d, _ in regions.values()})
    got.descriptions["aws_cpu_regions"] = (
        f"yeo/ec2.shop data/ec2/<region>-ondemand.json (commit {src.commit}; each file the AWS pricing page's "
        f"per-region list, published {', '.join(dates)} by its manifest): on-demand Linux $/h per region, used for "
        "the common CPU families only; Local and Wavelength Zones left out.")
    cpus = set(got.cpus["aws"])
    for region, (date, prices) in sorted(regions.items()):
        _add_cpu_rows(got, region, date, _with_spot(prices, cpus, got.advisor.get(region, {})))
    got.known["aws"] |= set(regions)


def _add_cpu_rows(got: Gathered, region: str, date: str, rows: dict[str, list[float | None]]) -> None:
    """The region's CPU rows: its own block where no other list prices the region, else a further block of the
    region (``more``) holding the types the region's block does not price, each block with its source and date."""
    block = got.blocks["aws"].get(region)
    if block is not None:
        rows = {n: v for n, v in rows.items() if n not in block.nodes}
    if not rows:
        return
    cpu = Block("aws_cpu_regions", date, "Spot Instance Advisor savings", "aws_spot_advisor",
                got.srcs["spot_advisor"].date, rows)
    if block is None:
        got.blocks["aws"][region] = cpu
    else:
        block.more.append(cpu)


def _lakemeter(got: Gathered, args: argparse.Namespace) -> None:
    """lakemeter's rows, where given, win: the Databricks cost tools' own source."""
    for src in (parse_source("lakemeter", text) for text in args.lakemeter or ()):
        rows, dates = read_lakemeter(src)
        for cloud, fetched in dates.items():
            got.descriptions[f"lakemeter_vm_{cloud}"] = (
                f"databrickslabs/lakemeter-oss backend/static/pricing/{src.path.name} (commit {src.commit}): {cloud} "
                f"on-demand and spot $/h, fetched {fetched}.")
        for (cloud, region), found in rows.items():
            mine = {n: v for n, v in sorted(found.items()) if n in got.wanted.get(cloud, set()) and v[0]}
            if mine:
                got.blocks[cloud][region] = Block(f"lakemeter_vm_{cloud}", dates[cloud],
                                                  "90-day average" if cloud == "aws" else "list price",
                                                  f"lakemeter_vm_{cloud}", dates[cloud], mine)
            got.known[cloud].add(region)


#: The order the sources are read in: newer lists first, each later one filling only what is left.
STEPS = (_gcp_regions, _azure_regions, _aws_us_east_1, _aws_gpu_regions, _aws_cpu_regions, _lakemeter)


def _block(b: Block) -> dict[str, Any]:
    out: dict[str, Any] = {"source": b.source, "date": b.date}
    if b.spot_source and any(v[1] is not None for v in b.nodes.values()):
        out.update(spot=b.spot, spot_source=b.spot_source, spot_date=b.spot_date)
    out["nodes"] = b.nodes
    if b.more:
        out["more"] = [_block(m) for m in b.more]
    return out


def cpu_catalog(cpus: dict[str, list[str]], dbu: dict[str, dict[str, dict[str, float]]],
                blocks: dict[str, dict[str, Block]], src: Source, descriptions: dict[str, str]) -> dict[str, Any]:
    entries: list[dict[str, Any]] = []
    for cloud, names in cpus.items():
        ref = blocks[cloud].get(REFERENCE[cloud])
        for name in names:
            row = ref.nodes.get(name) if ref else None
            if row is None:
                continue  # no reference-region price: not offered (a regional row may still price it)
            spec = dbu[cloud][name]
            entries.append({"cloud": cloud, "node_type_id": name, "vcpus": int(spec["vcpus"]),
                            "memory_gb": spec["memory_gb"], "usd_per_hour_on_demand": row[0],
                            "price_region": REFERENCE[cloud], "price_date": ref.date if ref else None,
                            "dbu_per_hour": spec["dbu_per_hour"], "dbu_date": src.date,
                            "sources": [ref.source if ref else "", "lakemeter_instance_dbu"],
                            "driver": name == DRIVER_DEFAULT[cloud]})
    cited = {s for e in entries for s in e["sources"]}
    sources = {k: v for k, v in descriptions.items() if k in cited}
    sources["lakemeter_instance_dbu"] = (
        f"databrickslabs/lakemeter-oss backend/static/pricing/instance-dbu-rates.csv (commit {src.commit}, bundle of "
        f"{src.date}): vCPUs, memory and DBU/h per instance type, from Databricks' instance-type sheet.")
    return {"sources": sources, "cpu_node_types": entries}


NOTE = ("GENERATED by dbx_ai_infra/pricing/tools/gen_vm_prices.py from public price lists: do not edit by hand, run "
        "the script "
        "again (docs/cost.md, 'Regions and sources'). Each block names its source key (under `sources`: repository, "
        "file, commit, date). What a source does not price is absent, never copied from another region.")


def dump(data: dict[str, Any], what: str) -> str:
    """JSON (read at every start in milliseconds, where YAML took seconds), one price row or one catalog entry per line
    so that a diff shows each figure that moved."""
    j = json.dumps
    out = ["{", f'  "note": {j(f"{NOTE} ({what})")},', f'  "sources": {j(data["sources"], indent=4)[:-1]}  }}']
    if "regions" in data:
        out[-1] += ","
        out.append('  "regions": {' + ", ".join(f"{j(c)}: {j(r)}" for c, r in data["regions"].items()) + "},")
        clouds = []
        for cloud, regions in data["clouds"].items():
            blocks = [f"    {j(region)}: {_dump_block(block, 4)}" for region, block in regions.items()]
            clouds.append(f"  {j(cloud)}: {{\n" + ",\n".join(blocks) + "\n  }")
        out.append('  "clouds": {\n' + ",\n".join(clouds) + "\n  }")
    else:
        out[-1] += ","
        out.append('  "cpu_node_types": [\n' + ",\n".join(f"    {j(e)}" for e in data["cpu_node_types"]) + "\n  ]")
    return "\n".join(out) + "\n}\n"


def _dump_block(block: dict[str, Any], indent: int) -> str:
    """One region's block: its head on one line, then one row per line, then its further blocks (``more``)."""
    j, pad = json.dumps, " " * indent
    head = {k: v for k, v in block.items() if k not in ("nodes", "more")}
    rows = ",\n".join(f"{pad}    {j(n)}: {j(v)}" for n, v in block["nodes"].items())
    out = f"{j(head)[:-1]}, \"nodes\": {{\n{rows}\n{pad}}}"
    if block.get("more"):
        more = ",\n".join(f"{pad}  {_dump_block(m, indent + 2)}" for m in block["more"])
        out += f", \"more\": [\n{more}\n{pad}]"
    return out + "}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cyclenerd", required=True, help="Cyclenerd pricing.yml@COMMIT (GCP, every region)")
    ap.add_argument("--karpenter-aws", required=True, help="karpenter-provider-aws zz_generated.pricing_aws.go@COMMIT")
    ap.add_argument("--karpenter-azure", required=True, help="karpenter-provider-azure zz_generated.pricing.go@COMMIT")
    ap.add_argument("--aws-gpu-regions", help="tsaol/aws-gpu data/all_gpu_instances.js@COMMIT (AWS GPU types, "
                    "every region; optional)")
    ap.add_argument("--aws-cpu-regions", help="yeo/ec2.shop data/ec2 directory@COMMIT (the AWS CPU families, every "
                    "region; optional)")
    ap.add_argument("--spot-advisor", required=True, help="spotinfo spot-advisor-data.json@COMMIT:DATE")
    ap.add_argument("--dbu-rates", required=True, help="lakemeter-oss instance-dbu-rates.csv@COMMIT:DATE")
    ap.add_argument("--lakemeter", action="append", help="lakemeter-oss vm-costs CSV@COMMIT (repeat; optional)")
    ap.add_argument("--out", type=Path, default=VM_OUT)
    ap.add_argument("--cpu-out", type=Path, default=CPU_OUT)
    args = ap.parse_args(argv)
    try:
        vm, cpu = build(args)
    except (SourceError, OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    args.out.write_text(dump(vm, "VM prices per region"), encoding="utf-8")
    args.cpu_out.write_text(dump(cpu, "the CPU node types"), encoding="utf-8")
    counts = {c: sum(len(b["nodes"]) for b in r.values()) for c, r in vm["clouds"].items()}
    print(f"wrote {args.out} ({counts}) and {args.cpu_out} ({len(cpu['cpu_node_types'])} CPU node types)")
    return 0




if __name__ == "__main__":
    sys.exit(main())
