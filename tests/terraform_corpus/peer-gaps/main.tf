# Each gap peer scanners (KICS's Databricks queries) flag, written as a team might: every one is caught here.

resource "databricks_token" "ci" {
  comment = "ci pipeline" # no lifetime_seconds: never expires
}

resource "databricks_obo_token" "etl" {
  application_id   = "6f1c2b8e-4d3a-4b7e-9c21-0a5e8d7f3b64"
  comment          = "etl service principal"
  lifetime_seconds = 3600
}

resource "databricks_cluster" "half_autoscale" {
  cluster_name            = "half-autoscale"
  spark_version           = "15.4.x-scala2.12"
  node_type_id            = "i3.xlarge"
  autotermination_minutes = 30
  custom_tags             = { workload = "etl", cost_center = "data" }
  autoscale {
    max_workers = 4
  }
}

resource "databricks_cluster" "apache_version" {
  cluster_name            = "apache-version"
  spark_version           = "3.3.1"
  node_type_id            = "i3.xlarge"
  num_workers             = 1
  autotermination_minutes = 30
  custom_tags             = { workload = "etl", cost_center = "data" }
}

resource "databricks_job" "legacy" {
  name = "legacy-submit"
  tags = { workload = "etl", cost_center = "data" }
  task {
    task_key = "main"
    new_cluster {
      spark_version = "15.4.x-scala2.12"
      node_type_id  = "i3.xlarge"
      num_workers   = 1
    }
    spark_submit_task {
      parameters = ["--class", "com.acme.Main", "/Volumes/etl/jars/main.jar"]
    }
  }
}

resource "databricks_permissions" "legacy" {
  job_id = databricks_job.legacy.id
  access_control {
    user_name        = "ana@acme.com"
    permission_level = "IS_OWNER"
  }
}
