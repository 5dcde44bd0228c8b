"""The reports: the typed report documents (`reportdoc`), the format registry and its writers (table, JSON, SARIF,
JUnit, GitHub annotations, Markdown, HTML), the terminal tables (`render`), the Markdown and HTML pages from the
top-level ``dbx_ai_infra/templates/`` (`pages`), advise's report (`advice`), findings located at their file and line
(`findings`) and baselines of them (`baseline`)."""
