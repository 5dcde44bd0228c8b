"""The readers of outside documents: a workspace read live through databricks-sdk (`workspace`), a workspace export
judged by the rules (`audit`), a Terraform plan read and priced (`terraform`), a stack against a workspace
(`drift`), and the base a cost diff compares against (`bases`). The export reader itself is
`policies.exports`: the offline evaluators read its items, below this layer."""
