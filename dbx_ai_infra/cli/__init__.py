"""The command line of ``python -m stackplan`` and the ``stackplan`` command: the parser built from each command's
declaration (`dbx_ai_infra.cli.commands`), and the commands' work. The top layer: it calls the engine (`stackplan`),
the readers of outside documents (`dbx_ai_infra.sources`), advise (`dbx_ai_infra.advise`) and the reports
(`dbx_ai_infra.reports`)."""
