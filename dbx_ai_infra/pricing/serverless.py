"""The rates of Databricks' serverless AI compute (``serverless.yaml``): serverless GPU per GPU-hour, provisioned
throughput per model unit-hour; each rate with the figures it comes from (their source and date), or `_Unpriced`
naming what has no rate and the override that prices it. Never $0 for something unknown."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from dbx_ai_infra.dbxtypes.documents import parse_packaged_yaml, read_text
from dbx_ai_infra.dbxtypes.vocabulary import MODEL_SERVING
from dbx_ai_infra.gpucatalog.accelerators import SERVERLESS_GPU_CLOUDS, accelerator

from .book import PriceBook
from .model import _Unpriced

SERVERLESS_PATH = Path(__file__).with_name("serverless.yaml")
GPU_OVERRIDE = "serverless_gpu_usd_per_gpu_hour"
GPU_DBU_OVERRIDE = "serverless_gpu_dbu_per_gpu_hour"
PT_OVERRIDE = "provisioned_throughput_dbu_per_model_unit_hour"

Figure = tuple[str, dict[str, Any]]


@functools.cache
def serverless_data() -> dict[str, Any]:
    text = read_text(SERVERLESS_PATH, "serverless rates file")
    data: dict[str, Any] = parse_packaged_yaml(text, str(SERVERLESS_PATH))
    return data


def _described(key: str) -> str:
    return f"{key}: {serverless_data()['sources'][key]}"


def serverless_gpu_rate(prices: PriceBook, cloud: str, name: str) -> tuple[float, list[Figure]]:
    """USD per GPU-hour of accelerator ``name`` on ``cloud`` at the book's tier and region, and its figures."""
    override = prices.serverless_override(GPU_OVERRIDE, cloud, name)
    if override is not None:
        return override[0], [(f"serverless_gpu.{cloud}.{name}.usd_per_gpu_hour",
                              {"value": override[0], "source": override[1], "date": None, "estimate": False})]
    if cloud not in SERVERLESS_GPU_CLOUDS:
        raise _Unpriced(f"serverless GPU is not offered on {cloud}")
    acc = accelerator(name)
    if acc is None:
        raise _Unpriced(f"{name} is not a serverless GPU accelerator databricks-sdk lists; price it with "
                        f"{GPU_OVERRIDE}.{cloud}.{name} in a --prices file")
    data = serverless_data()["serverless_gpu"]
    given = prices.serverless_override(GPU_DBU_OVERRIDE, cloud, name)
    dbu: dict[str, Any] | None = {"value": given[0], "source": given[1], "date": None, "estimate": False} \
        if given is not None \
        else data["dbu_per_gpu_hour"].get(acc.gpu)
    if dbu is None:
        raise _Unpriced(f"no public DBU-per-GPU-hour rate for {acc.gpu} ({name}) on serverless GPU; price it with "
                        f"{GPU_OVERRIDE}.{cloud}.{name} (USD per GPU-hour) or {GPU_DBU_OVERRIDE}.{cloud}.{name} "
                        f"(DBU per GPU-hour, priced at the region's MODEL_TRAINING $/DBU) in a --prices file")
    region = prices.region(cloud)
    per_dbu = data["usd_per_dbu"].get(cloud, {}).get(prices.tier, {}).get(region)
    if per_dbu is None:
        raise _Unpriced(f"no MODEL_TRAINING $/DBU for {cloud} {prices.tier} in {region} "
                        f"(dbx_ai_infra/pricing/serverless.yaml "
                        f"has {', '.join(data['usd_per_dbu'].get(cloud, {}).get(prices.tier, {})) or 'none'}); "
                        f"price it with {GPU_OVERRIDE}.{cloud}.{name} in a --prices file")
    figures: list[Figure] = [
        (f"serverless_gpu.{acc.gpu}.dbu_per_gpu_hour",
         {"value": dbu["value"], "source": dbu["source"] if given is not None else _described(dbu["source"]),
          "date": dbu["date"],
          "estimate": bool(dbu.get("estimate"))}),
        (f"serverless_gpu.usd_per_dbu.{cloud}.{prices.tier}.{region}",
         {"value": per_dbu, "source": _described(data["usd_per_dbu"]["source"]), "date": data["usd_per_dbu"]["date"],
          "estimate": False})]
    return float(dbu["value"]) * float(per_dbu), figures


def provisioned_throughput_rate(prices: PriceBook, cloud: str, entity: str) -> tuple[float, list[Figure]]:
    """USD per model unit-hour of foundation model ``entity`` on ``cloud``, and its figures."""
    override = prices.serverless_override(PT_OVERRIDE, cloud, entity)
    model = serverless_data()["provisioned_throughput"]["models"].get(entity) or {}
    dbu: dict[str, Any] | None = {"value": override[0], "source": override[1], "date": None, "estimate": False} \
        if override is not None else model.get("dbu_per_model_unit_hour")
    if dbu is None:
        why = model.get("unpriced") or f"no public per-model-unit rate for {entity}"
        raise _Unpriced(f"{why}; price it with {PT_OVERRIDE}.{cloud}.{entity} (DBU per model unit-hour) in a "
                        f"--prices file")
    per_dbu = prices.usd_per_dbu(cloud, MODEL_SERVING)
    if per_dbu is None:
        raise _Unpriced(f"no model-serving $/DBU for {cloud} ({prices.tier})")
    source = dbu["source"] if override is not None else _described(dbu["source"])
    figures: list[Figure] = [(f"provisioned_throughput.{entity}.dbu_per_model_unit_hour",
                              {"value": dbu["value"], "source": source, "date": dbu["date"],
                               "estimate": bool(dbu.get("estimate"))})]
    return float(dbu["value"]) * per_dbu, figures
