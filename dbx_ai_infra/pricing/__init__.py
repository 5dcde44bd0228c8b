"""The cost model: pure functions of a plan and price data (see ``dbx_ai_infra.pricing.model`` for the model and worked
examples).

Public API::

    from dbx_ai_infra.pricing import load_prices, load_overrides_file, price_plan, diff_costs

    prices = load_prices(load_overrides_file("prices.yaml"))   # rates.yaml + node catalog + overrides
    plan["cost"] = price_plan(plan, prices)
    change = diff_costs(base_plan, plan)

Price data: ``dbx_ai_infra/pricing/rates.yaml`` ($/DBU, spot factors) and ``dbx_ai_infra/gpucatalog/node_types.yaml``
(VM $/h, DBU/h).
"""

from .book import (
    TIERS,
    NodePrice,
    NodePriceOverride,
    PriceBook,
    PriceOverrides,
    load_overrides_file,
    load_prices,
)
from .comparisons import (
    CHEAPER_SINGLE_GPU,
    CLUSTER_VS_ENDPOINT,
    ENDPOINT_VS_CLUSTER,
    TRAINING_ON_JOB_COMPUTE,
    cheaper_gpu_advice,
    job_compute_advice,
    serving_comparison,
)
from .diff import diff_costs
from .model import DEFAULT_ASSUMPTIONS, MODEL_NOTES
from .plan_cost import price_plan
from .serverless_comparison import (
    JOB_CLUSTER_VS_SERVERLESS_GPU,
    SERVERLESS_GPU_VS_JOB_CLUSTER,
    serverless_gpu_comparison,
)

__all__ = [
    "CHEAPER_SINGLE_GPU",
    "CLUSTER_VS_ENDPOINT",
    "DEFAULT_ASSUMPTIONS",
    "ENDPOINT_VS_CLUSTER",
    "JOB_CLUSTER_VS_SERVERLESS_GPU",
    "MODEL_NOTES",
    "TIERS",
    "NodePrice",
    "NodePriceOverride",
    "PriceBook",
    "PriceOverrides",
    "SERVERLESS_GPU_VS_JOB_CLUSTER",
    "TRAINING_ON_JOB_COMPUTE",
    "cheaper_gpu_advice",
    "job_compute_advice",
    "serving_comparison",
    "serverless_gpu_comparison",
    "diff_costs",
    "load_overrides_file",
    "load_prices",
    "price_plan",
]
