# The shape of the provider's own cluster example: the node type and the runtime chosen by data sources, an
# autoscaled shared cluster. Expected: its runtime is judged by its arguments (LTS asked for: passes), the node type
# chosen by data source without min_gpus is not known to be a GPU one, so no role rule applies; the cost tags are
# missing (mandatory) and nobody is granted the cluster (advisory).

data "databricks_node_type" "smallest" {
  local_disk = true
}

data "databricks_spark_version" "latest_lts" {
  long_term_support = true
}

resource "databricks_cluster" "shared_autoscaling" {
  cluster_name            = "Shared Autoscaling"
  spark_version           = data.databricks_spark_version.latest_lts.id
  node_type_id            = data.databricks_node_type.smallest.id
  autotermination_minutes = 20

  autoscale {
    min_workers = 1
    max_workers = 50
  }
}
