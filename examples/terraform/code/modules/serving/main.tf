variable "name" {
  type = string
}

variable "max" {
  type = number
}

variable "spot" {
  type = bool
}

variable "tags" {
  type = map(string)
}

resource "databricks_cluster" "this" {
  cluster_name            = var.name
  spark_version           = "15.4.x-gpu-ml-scala2.12"
  node_type_id            = "g5.2xlarge"
  autotermination_minutes = 0

  autoscale {
    min_workers = 2
    max_workers = var.max
  }

  aws_attributes {
    availability    = var.spot ? "SPOT" : "ON_DEMAND"
    first_on_demand = 1
  }

  custom_tags = merge(var.tags, { workload = "serving", workload_type = "inference" })
}

resource "databricks_permissions" "this" {
  cluster_id = databricks_cluster.this.id

  access_control {
    group_name       = "ml-serving"
    permission_level = "CAN_RESTART"
  }
}
