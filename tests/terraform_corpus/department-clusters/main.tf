# A cluster per department, as platform teams write it: CPU clusters for analysts, one GPU cluster for the ML team,
# each granted to its department's group. Expected: nothing from the role rules on the CPU clusters; the GPU
# cluster, autoscaled for notebooks (no workload_type tag) on spot with fallback, gets the advisory that asks for
# its role; every cluster is granted, so no access finding.

variable "departments" {
  default = {
    finance   = { workers = 2, gpu = false }
    marketing = { workers = 1, gpu = false }
    research  = { workers = 4, gpu = true }
  }
}

locals {
  tags = { cost_center = "shared-analytics" }
}

resource "databricks_cluster" "department" {
  for_each                = var.departments
  cluster_name            = "${each.key}-cluster"
  spark_version           = each.value.gpu ? "15.4.x-gpu-ml-scala2.12" : "15.4.x-scala2.12"
  node_type_id            = each.value.gpu ? "g5.2xlarge" : "i3.xlarge"
  autotermination_minutes = 60
  custom_tags             = merge(local.tags, { workload = each.key })

  autoscale {
    min_workers = 1
    max_workers = each.value.workers
  }

  aws_attributes {
    availability    = "SPOT_WITH_FALLBACK"
    first_on_demand = 1
  }
}

resource "databricks_permissions" "department" {
  for_each   = var.departments
  cluster_id = databricks_cluster.department[each.key].id

  access_control {
    group_name       = each.key
    permission_level = "CAN_RESTART"
  }
}
