# A Terraform root module as a team writes it: variables with defaults, terraform.tfvars, locals, a for_each
# module call and data sources. Expected verdict: exit 1, an all-spot autoscaled GPU inference cluster in each
# instance of module.serving (mandatory), and nothing from the role rules on the CPU ETL cluster.

variable "env" {
  type    = string
  default = "dev"
}

variable "models" {
  type = map(object({ max = number }))
  default = {
    chat = { max = 8 }
  }
}

variable "spot_inference" {
  type    = bool
  default = false
}

locals {
  name = "ml-${var.env}"
  tags = merge({ cost_center = "ai-platform" }, { environment = var.env })
}

data "databricks_spark_version" "lts" {
  long_term_support = true
}

data "databricks_node_type" "small" {
  local_disk = true
  min_cores  = 4
}

module "serving" {
  source   = "./modules/serving"
  for_each = var.models
  name     = "${local.name}-${each.key}"
  max      = each.value.max
  spot     = var.spot_inference
  tags     = local.tags
}

resource "databricks_cluster" "etl" {
  cluster_name            = "${local.name}-etl"
  spark_version           = data.databricks_spark_version.lts.id
  node_type_id            = "i3.xlarge"
  num_workers             = 2
  autotermination_minutes = 30
  custom_tags             = merge(local.tags, { workload = "etl" })

  aws_attributes {
    availability = "SPOT_WITH_FALLBACK"
  }
}

resource "databricks_permissions" "etl" {
  cluster_id = databricks_cluster.etl.id

  access_control {
    group_name       = "data-eng"
    permission_level = "CAN_ATTACH_TO"
  }
}
